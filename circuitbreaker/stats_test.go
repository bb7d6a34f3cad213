package circuitbreaker_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cb "github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/internal/logging/logtest"
)

var errIgnoredStat = errors.New("ignored")

// buckets returns the bucket counts with n[i] calls in bucket i.
func buckets(n map[int]uint64) [cb.NumCallBuckets]uint64 {
	var b [cb.NumCallBuckets]uint64
	for i, v := range n {
		b[i] = v
	}
	return b
}

// CallStats counts every kind of call with its exact durations, bucket by bucket, across
// transitions, late outcomes included, and leaves out what the events leave out.
func TestCallStatsExactValues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, cb.Config{SlidingWindowSize: 4, MinimumNumberOfCalls: 4, IgnoreErrors: []error{errIgnoredStat}, FailureRateThreshold: 100,
			WaitDurationInOpenState: time.Minute})
		assert.Equal(t, cb.CallStats{}, b.CallStats())

		require.NoError(t, run(b, 3*time.Millisecond, nil))               // bucket 0 (<= 5ms)
		require.NoError(t, run(b, 5*time.Millisecond, nil))               // bucket 0: bounds are inclusive
		require.NoError(t, run(b, 5*time.Millisecond+1, nil))             // bucket 1 (<= 10ms)
		require.ErrorIs(t, run(b, 30*time.Millisecond, errBoom), errBoom) // bucket 3 (<= 50ms)
		require.ErrorIs(t, run(b, 11*time.Second, errIgnoredStat), errIgnoredStat)
		acquire(t, b).OnErrorWithDuration(2*time.Second, errBoom) // bucket 8 (<= 2.5s)

		late := acquire(t, b)
		require.NoError(t, b.TransitionToOpenState())
		for range 3 {
			_, err := b.Acquire()
			require.ErrorIs(t, err, cb.ErrCallNotPermitted)
		}
		late.OnSuccessWithDuration(time.Second) // late: not in the window, but a call all the same

		want := cb.CallStats{
			Successful: cb.CallDurations{Count: 4, TotalDuration: 1013*time.Millisecond + 1,
				MaxDuration: time.Second, Buckets: buckets(map[int]uint64{0: 2, 1: 1, 7: 1})},
			Failed: cb.CallDurations{Count: 2, TotalDuration: 2030 * time.Millisecond,
				MaxDuration: 2 * time.Second, Buckets: buckets(map[int]uint64{3: 1, 8: 1})},
			Ignored: cb.CallDurations{Count: 1, TotalDuration: 11 * time.Second,
				MaxDuration: 11 * time.Second, Buckets: buckets(map[int]uint64{11: 1})},
			NotPermitted: 3,
		}
		assert.Equal(t, want, b.CallStats())
		assert.Equal(t, 3, b.Metrics().NumberOfNotPermittedCalls)

		// Transitions and Reset reset Metrics, not CallStats.
		require.NoError(t, b.TransitionToClosedState())
		b.Reset()
		assert.Equal(t, want, b.CallStats())
		assert.Equal(t, 0, b.Metrics().NumberOfBufferedCalls)

		// DISABLED and FORCED_OPEN publish no per-call events, and count nothing here either.
		require.NoError(t, b.TransitionToDisabledState())
		require.NoError(t, ok(b))
		require.NoError(t, b.TransitionToForcedOpenState())
		_, err := b.Acquire()
		require.ErrorIs(t, err, cb.ErrCallNotPermitted)
		assert.Equal(t, want, b.CallStats())
	})
}

// MaxDuration is Micrometer's decaying maximum: a duration is forgotten between 80 and 120
// seconds after the call, counted on the breaker's clock from New.
func TestCallStatsMaxDecays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, cb.Config{})
		max := func() time.Duration { return b.CallStats().Successful.MaxDuration }
		assert.Equal(t, time.Duration(0), max())

		time.Sleep(time.Second)
		acquire(t, b).OnSuccessWithDuration(5 * time.Millisecond) // at 1s
		assert.Equal(t, 5*time.Millisecond, max())
		time.Sleep(49 * time.Second)
		acquire(t, b).OnSuccessWithDuration(3 * time.Millisecond) // at 50s, after the rotation at 40s
		assert.Equal(t, 5*time.Millisecond, max())
		time.Sleep(30 * time.Second) // 80s
		assert.Equal(t, 5*time.Millisecond, max(), "still in the bucket read after the second rotation")
		time.Sleep(40 * time.Second) // 120s
		assert.Equal(t, 3*time.Millisecond, max(), "the sample of 1s is forgotten at the third rotation")
		time.Sleep(10 * time.Second) // 130s
		acquire(t, b).OnSuccessWithDuration(time.Millisecond)
		assert.Equal(t, 3*time.Millisecond, max(), "a smaller sample does not lower the maximum")
		time.Sleep(30 * time.Second) // 160s
		assert.Equal(t, time.Millisecond, max())
		time.Sleep(240 * time.Second) // 400s
		assert.Equal(t, time.Duration(0), max(), "a long silence empties every bucket")
		assert.Equal(t, uint64(3), b.CallStats().Successful.Count, "the counts stay")
	})
}

// CallDurationBuckets are the Prometheus client's default buckets, a fresh slice each time.
func TestCallDurationBuckets(t *testing.T) {
	ms := time.Millisecond
	want := []time.Duration{5 * ms, 10 * ms, 25 * ms, 50 * ms, 100 * ms, 250 * ms, 500 * ms,
		time.Second, 2500 * ms, 5 * time.Second, 10 * time.Second}
	got := cb.CallDurationBuckets()
	assert.Equal(t, want, got)
	got[0] = 0
	assert.Equal(t, want, cb.CallDurationBuckets())
	assert.Equal(t, len(want)+1, cb.NumCallBuckets)
	var nilBreaker *cb.CircuitBreaker
	assert.Equal(t, cb.CallStats{}, nilBreaker.CallStats())
}

// SubscribeTypes delivers the types asked for, in order, and nothing else; no types, or a nil
// fn, subscribes nothing.
func TestSubscribeTypes(t *testing.T) {
	b := mustNew(t, small())
	var got []cb.EventType
	unsubscribe := b.SubscribeTypes(func(e cb.Event) { got = append(got, e.Type) },
		cb.EventStateTransition, cb.EventFailureRateExceeded)
	var errors []cb.EventType
	b.SubscribeTypes(func(e cb.Event) { errors = append(errors, e.Type) }, cb.EventError)
	b.SubscribeTypes(func(cb.Event) { t.Error("no types: nothing delivered") })
	b.SubscribeTypes(nil, cb.EventSuccess)
	for range 4 {
		require.ErrorIs(t, fail(b), errBoom)
	}
	assert.Equal(t, []cb.EventType{cb.EventFailureRateExceeded, cb.EventStateTransition}, got)
	assert.Equal(t, []cb.EventType{cb.EventError, cb.EventError, cb.EventError, cb.EventError}, errors)
	unsubscribe()
	unsubscribe()
	require.NoError(t, b.TransitionToClosedState())
	assert.Len(t, got, 2)
	var nilBreaker *cb.CircuitBreaker
	nilBreaker.SubscribeTypes(func(cb.Event) {}, cb.EventSuccess)()
}

// A logger or an OnStateChange callback builds no per-call event: a successful call with
// either allocates nothing and the logger still logs the transitions.
func TestTransitionSubscribersCostACallNothing(t *testing.T) {
	h, logger := logtest.New(slog.LevelInfo)
	b := mustNew(t, cb.Config{Logger: logger, SlidingWindowSize: 4, MinimumNumberOfCalls: 4})
	var transitions int
	b.OnStateChange(func(cb.State, cb.State) { transitions++ })
	ctx := context.Background()
	call := func(context.Context) (int, error) { return 1, nil }
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = cb.Execute(ctx, b, call) }))
	require.NoError(t, b.TransitionToOpenState())
	assert.Equal(t, 1, transitions)
	assert.Len(t, h.Records(), 1)
	assert.Equal(t, uint64(1001), b.CallStats().Successful.Count)
}
