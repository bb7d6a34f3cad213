package circuitbreaker_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cb "github.com/levee-go/levee/circuitbreaker"
)

// durations returns the Duration of each recorded call event (SUCCESS, ERROR, IGNORED_ERROR).
func durations(ev *events) []time.Duration {
	var got []time.Duration
	for _, e := range ev.list() {
		switch e.Type {
		case cb.EventSuccess, cb.EventError, cb.EventIgnoredError:
			got = append(got, e.Duration)
		}
	}
	return got
}

// TestWithDurationJudgesTheGivenDuration: the slow-call rate comes from the durations the
// caller gives, strictly longer than the threshold being slow, and the breaker opens on it.
func TestWithDurationJudgesTheGivenDuration(t *testing.T) {
	b := mustNew(t, cb.Config{SlidingWindowSize: 4, SlowCallDurationThreshold: 100 * time.Millisecond,
		SlowCallRateThreshold: 50, FailureRateThreshold: 100})
	ev := record(b)
	acquire(t, b).OnSuccessWithDuration(100 * time.Millisecond)      // exactly the threshold: not slow
	acquire(t, b).OnSuccessWithDuration(100*time.Millisecond + 1)    // slow
	acquire(t, b).OnErrorWithDuration(150*time.Millisecond, errBoom) // slow failure
	require.Equal(t, cb.Closed, b.State(), "three calls: below the minimum of four")
	acquire(t, b).OnResultWithDuration(5*time.Millisecond, "order", nil) // fast success
	m := b.Metrics()
	assert.Equal(t, counts{buffered: 4, failed: 1, successful: 3, slow: 2, slowSuccessful: 1, slowFailed: 1}, countsOf(m))
	assert.Equal(t, float32(25), m.FailureRate)
	assert.Equal(t, float32(50), m.SlowCallRate)
	assert.Equal(t, 355*time.Millisecond+1, m.TotalDuration)
	assert.Equal(t, 250*time.Millisecond+1, m.SlowCallDuration)
	assert.Equal(t, cb.Open, b.State(), "a slow-call rate of 50% opens it")
	assert.Equal(t, []time.Duration{100 * time.Millisecond, 100*time.Millisecond + 1, 150 * time.Millisecond,
		5 * time.Millisecond}, durations(ev))
	assert.Equal(t, []cb.EventType{cb.EventSuccess, cb.EventSuccess, cb.EventError, cb.EventSuccess,
		cb.EventSlowCallRateExceeded, cb.EventStateTransition}, ev.types())
}

// TestWithDurationOverridesTheElapsedTime: the permit's own timing is not consulted; the
// given duration decides, whichever way the two differ.
func TestWithDurationOverridesTheElapsedTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, cb.Config{SlidingWindowSize: 10, SlowCallDurationThreshold: time.Second})
		ev := record(b)
		long := acquire(t, b)
		time.Sleep(5 * time.Second)
		long.OnSuccessWithDuration(10 * time.Millisecond) // measured elsewhere, say on the server
		acquire(t, b).OnErrorWithDuration(2*time.Second, errBoom)
		acquire(t, b).OnResultWithDuration(3*time.Second, nil, nil)
		assert.Equal(t, []time.Duration{10 * time.Millisecond, 2 * time.Second, 3 * time.Second}, durations(ev))
		assert.Equal(t, counts{buffered: 3, failed: 1, successful: 2, slow: 2, slowSuccessful: 1, slowFailed: 1}, countsOf(b.Metrics()))
		assert.Equal(t, 5010*time.Millisecond, b.Metrics().TotalDuration)
	})
}

// TestWithDurationNegativeIsZero: a negative duration is recorded as a call of no duration,
// in the window and in the event.
func TestWithDurationNegativeIsZero(t *testing.T) {
	b := mustNew(t, cb.Config{SlidingWindowSize: 10})
	ev := record(b)
	acquire(t, b).OnSuccessWithDuration(-time.Second)
	acquire(t, b).OnErrorWithDuration(-1, errBoom)
	acquire(t, b).OnResultWithDuration(-time.Hour, "v", nil)
	m := b.Metrics()
	assert.Equal(t, counts{buffered: 3, failed: 1, successful: 2}, countsOf(m))
	assert.Equal(t, time.Duration(0), m.TotalDuration)
	assert.Equal(t, []time.Duration{0, 0, 0}, durations(ev))
}

// TestWithDurationIgnoredAndResultFailure: the error lists and RecordResultPredicate classify
// as for OnError and OnResult; an ignored error's event carries the given duration and its
// permit goes back.
func TestWithDurationIgnoredAndResultFailure(t *testing.T) {
	cfg := small()
	cfg.IgnoreErrors = []error{errInvalid}
	cfg.RecordResultPredicate = func(v any) bool { return v == "bad" }
	cfg.SlowCallDurationThreshold = time.Second
	b := mustNew(t, cfg)
	require.NoError(t, b.TransitionToOpenState())
	require.NoError(t, b.TransitionToHalfOpenState())
	ev := record(b)
	p := acquire(t, b)
	p.OnErrorWithDuration(3*time.Second, errInvalid)
	_ = acquire(t, b)
	_ = acquire(t, b) // the ignored probe's permit came back: two probes held now
	var refused *cb.CallNotPermittedError
	assert.ErrorAs(t, try(b), &refused, "both probes are held")
	got := ev.list()
	require.NotEmpty(t, got)
	assert.Equal(t, cb.EventIgnoredError, got[0].Type)
	assert.Equal(t, 3*time.Second, got[0].Duration)
	assert.Equal(t, errInvalid, got[0].Err)
	assert.Equal(t, counts{notPermitted: 1}, countsOf(b.Metrics()))

	c := mustNew(t, cfg)
	ev = record(c)
	acquire(t, c).OnResultWithDuration(2*time.Second, "bad", nil)
	acquire(t, c).OnResultWithDuration(time.Millisecond, "good", nil)
	assert.Equal(t, counts{buffered: 2, failed: 1, successful: 1, slow: 1, slowFailed: 1}, countsOf(c.Metrics()))
	assert.Equal(t, []time.Duration{2 * time.Second, time.Millisecond}, durations(ev))
	var rf *cb.ResultRecordedAsFailureError
	assert.ErrorAs(t, ev.list()[0].Err, &rf)
}

// TestWithDurationOnAUsedPermit: a HALF_OPEN probe completed once records nothing more,
// whichever method completes it the second time; in CLOSED a second report counts again (see
// Permit); the zero Permit does nothing.
func TestWithDurationOnAUsedPermit(t *testing.T) {
	b := mustNew(t, small())
	require.NoError(t, b.TransitionToOpenState())
	require.NoError(t, b.TransitionToHalfOpenState())
	p := acquire(t, b)
	p.OnSuccess()
	p.OnSuccessWithDuration(time.Second)
	p.OnErrorWithDuration(time.Second, errBoom)
	p.OnResultWithDuration(time.Second, nil, nil)
	assert.Equal(t, counts{buffered: 1, successful: 1}, countsOf(b.Metrics()))

	c := mustNew(t, cb.Config{SlidingWindowSize: 10})
	q := acquire(t, c)
	q.OnSuccessWithDuration(time.Second)
	q.OnErrorWithDuration(time.Second, errBoom)
	assert.Equal(t, counts{buffered: 2, failed: 1, successful: 1}, countsOf(c.Metrics()))

	var zero cb.Permit
	zero.OnSuccessWithDuration(time.Second)
	zero.OnErrorWithDuration(time.Second, errBoom)
	zero.OnResultWithDuration(time.Second, nil, nil)
}

// TestWithDurationTimeWindow: a time-based window files the outcome under the second it is
// reported in, whatever its duration, and lets it go SlidingWindowSize seconds later.
func TestWithDurationTimeWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, cb.Config{SlidingWindowType: cb.TimeBased, SlidingWindowSize: 2, MinimumNumberOfCalls: 10})
		acquire(t, b).OnSuccessWithDuration(time.Hour)
		time.Sleep(time.Second)
		acquire(t, b).OnErrorWithDuration(time.Minute, errBoom)
		assert.Equal(t, counts{buffered: 2, failed: 1, successful: 1, slow: 1, slowSuccessful: 1}, countsOf(b.Metrics()))
		time.Sleep(time.Second)
		assert.Equal(t, counts{buffered: 1, failed: 1}, countsOf(b.Metrics()))
		assert.Equal(t, time.Minute, b.Metrics().TotalDuration)
	})
}

func TestWithDurationDoesNotAllocate(t *testing.T) {
	for _, typ := range []cb.SlidingWindowType{cb.CountBased, cb.TimeBased} {
		t.Run(typ.String(), func(t *testing.T) {
			b := mustNew(t, cb.Config{SlidingWindowType: typ, SlidingWindowSize: 10, FailureRateThreshold: 100})
			assert.Equal(t, 0.0, testing.AllocsPerRun(1000, func() {
				p, _ := b.Acquire()
				p.OnSuccessWithDuration(time.Millisecond)
			}), "OnSuccessWithDuration")
			assert.Equal(t, 0.0, testing.AllocsPerRun(1000, func() {
				p, _ := b.Acquire()
				p.OnResultWithDuration(time.Millisecond, nil, nil)
			}), "OnResultWithDuration")
			assert.Equal(t, 0.0, testing.AllocsPerRun(1000, func() {
				p, _ := b.Acquire()
				p.OnErrorWithDuration(time.Millisecond, errBoom)
				q, _ := b.Acquire() // a failure rate of 50%: the breaker stays CLOSED
				q.OnSuccessWithDuration(time.Millisecond)
			}), "OnErrorWithDuration")
			assert.Equal(t, cb.Closed, b.State())
		})
	}
}
