package circuitbreaker_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cb "github.com/levee-go/levee/circuitbreaker"
)

// oneProbe is a count-based breaker that opens on two failures of two (window 2), waits 10s
// and lets one probe decide.
func oneProbe() cb.Config {
	return cb.Config{
		SlidingWindowSize:                     2,
		MinimumNumberOfCalls:                  2,
		WaitDurationInOpenState:               10 * time.Second,
		PermittedNumberOfCallsInHalfOpenState: 1,
		SlowCallDurationThreshold:             5 * time.Second,
		IgnoreErrors:                          []error{errInvalid},
		RecordResultPredicate:                 func(r any) bool { return r == "bad" },
	}
}

// openThenProbe admits a call in CLOSED, opens the breaker with two quick failures, waits for
// the end of OPEN and takes the single HALF_OPEN probe. It returns the CLOSED call's permit
// and the probe's.
func openThenProbe(t *testing.T, b *cb.CircuitBreaker) (slow, probe cb.Permit) {
	t.Helper()
	slow = acquire(t, b)
	require.ErrorIs(t, fail(b), errBoom)
	require.ErrorIs(t, fail(b), errBoom)
	require.Equal(t, cb.Open, b.State())
	time.Sleep(10*time.Second + 1)
	probe = acquire(t, b)
	require.Equal(t, cb.HalfOpen, b.State())
	return slow, probe
}

// TestLateOutcomeDoesNotDecideHalfOpen: a call admitted while CLOSED that ends after the
// breaker went OPEN → HALF_OPEN reports nothing to the HALF_OPEN trial, whatever its outcome:
// its event is published with Late set, the HALF_OPEN window stays empty, no probe permit
// comes back, and the real probe decides. Resilience4j records the late outcome in HALF_OPEN,
// where a success closes the breaker (and the probe's failure then lands in the new CLOSED
// window).
func TestLateOutcomeDoesNotDecideHalfOpen(t *testing.T) {
	tests := []struct {
		name   string
		report func(p cb.Permit)
		want   cb.Event
	}{
		{"success", func(p cb.Permit) { p.OnSuccess() },
			cb.Event{Type: cb.EventSuccess}},
		{"failure", func(p cb.Permit) { p.OnError(errBoom) },
			cb.Event{Type: cb.EventError, Err: errBoom}},
		{"ignored error", func(p cb.Permit) { p.OnError(errInvalid) },
			cb.Event{Type: cb.EventIgnoredError, Err: errInvalid}},
		{"result recorded as failure", func(p cb.Permit) { p.OnResult("bad", nil) },
			cb.Event{Type: cb.EventError, Err: &cb.ResultRecordedAsFailureError{Name: "test", Result: "bad"}}},
		{"successful result", func(p cb.Permit) { p.OnResult("good", nil) },
			cb.Event{Type: cb.EventSuccess}},
	}
	for _, tt := range tests {
		for _, probeFails := range []bool{false, true} {
			name := tt.name + ", then the probe succeeds"
			if probeFails {
				name = tt.name + ", then the probe fails"
			}
			t.Run(name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					b := mustNew(t, oneProbe())
					ev := record(b)
					slow, probe := openThenProbe(t, b)
					ev.reset()

					tt.report(slow) // 10s after its grant: a slow call too
					assert.Equal(t, cb.HalfOpen, b.State(), "the late outcome decided nothing")
					assert.Equal(t, counts{}, countsOf(b.Metrics()), "nothing in the HALF_OPEN window")
					assert.ErrorIs(t, try(b), cb.ErrCallNotPermitted, "no probe permit came back")
					want := tt.want
					want.Name, want.Duration, want.Late = "test", 10*time.Second+1, true
					evs := ev.list()
					require.Len(t, evs, 2, "the late outcome's event, then the refusal")
					evs[0].Time = time.Time{}
					assert.Equal(t, want, evs[0])
					assert.Equal(t, cb.EventNotPermitted, evs[1].Type)

					time.Sleep(time.Second)
					if probeFails {
						probe.OnError(errBoom)
						assert.Equal(t, cb.Open, b.State(), "the probe decided: 1 failure of 1")
						assert.Equal(t, counts{buffered: 1, failed: 1, notPermitted: 1}, countsOf(b.Metrics()),
							"OPEN shows the HALF_OPEN window: the probe alone, and its refusal")
						assert.Equal(t, []string{"HALF_OPEN>OPEN"}, ev.transitions())
					} else {
						probe.OnSuccess()
						assert.Equal(t, cb.Closed, b.State(), "the probe decided: 1 success of 1")
						assert.Equal(t, counts{}, countsOf(b.Metrics()), "a fresh CLOSED window")
						assert.Equal(t, []string{"HALF_OPEN>CLOSED"}, ev.transitions())
					}
					assert.False(t, ev.list()[2].Late, "the probe's own outcome is not late")
				})
			})
		}
	}
}

// TestLateSuccessThroughExecute is the first scenario through Execute: a slow call admitted in
// CLOSED returns while the breaker is HALF_OPEN, and the probe then fails. The slow call's
// success does not close the breaker, and the probe's failure reopens it.
func TestLateSuccessThroughExecute(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, oneProbe())
		ev := record(b)
		done := make(chan error, 1)
		go func() { done <- run(b, 12*time.Second, nil) }()
		synctest.Wait()
		require.ErrorIs(t, fail(b), errBoom)
		require.ErrorIs(t, fail(b), errBoom)
		time.Sleep(10*time.Second + 1)
		probe := acquire(t, b)
		require.NoError(t, <-done) // at 12s
		assert.Equal(t, cb.HalfOpen, b.State())
		probe.OnError(errBoom)
		assert.Equal(t, cb.Open, b.State())
		assert.Equal(t, []string{"CLOSED>OPEN", "OPEN>HALF_OPEN", "HALF_OPEN>OPEN"}, ev.transitions())
		assert.Equal(t, []string{"ERROR", "ERROR", "SUCCESS late", "ERROR"}, outcomeEvents(ev))
		assert.Equal(t, counts{buffered: 1, failed: 1}, countsOf(b.Metrics()))
	})
}

// TestLateFailuresDoNotReopenHalfOpen: two outcomes reported on one CLOSED permit (a mistake)
// after the breaker went HALF_OPEN neither fill its window nor reopen it; its two probes are
// still there and decide. Resilience4j records both and reopens a HALF_OPEN breaker that
// admitted no probe.
func TestLateFailuresDoNotReopenHalfOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := oneProbe()
		cfg.PermittedNumberOfCallsInHalfOpenState = 2
		b := mustNew(t, cfg)
		ev := record(b)
		late := acquire(t, b)
		require.ErrorIs(t, fail(b), errBoom)
		require.ErrorIs(t, fail(b), errBoom)
		time.Sleep(10*time.Second + 1)
		require.NoError(t, b.TransitionToHalfOpenState())
		require.Equal(t, cb.HalfOpen, b.State())

		late.OnError(errBoom)
		late.OnError(errBoom)
		assert.Equal(t, cb.HalfOpen, b.State())
		assert.Equal(t, counts{}, countsOf(b.Metrics()))
		assert.Equal(t, []string{"ERROR", "ERROR", "ERROR late", "ERROR late"}, outcomeEvents(ev))

		require.NoError(t, ok(b))
		assert.Equal(t, cb.HalfOpen, b.State(), "1 probe of 2")
		require.NoError(t, ok(b))
		assert.Equal(t, cb.Closed, b.State(), "2 successful probes of 2")
		assert.Equal(t, []string{"CLOSED>OPEN", "OPEN>HALF_OPEN", "HALF_OPEN>CLOSED"}, ev.transitions())
	})
}

// TestLateOutcomeNotCountedInNewClosedPeriod: a probe still running when the other probes
// closed the breaker reports into no CLOSED window, nor does a call admitted before a Reset
// or a TransitionToClosedState (each starts a new CLOSED period) or before the breaker moved
// to METRICS_ONLY; TransitionOnResult is not shown their outcomes.
func TestLateOutcomeNotCountedInNewClosedPeriod(t *testing.T) {
	consulted := 0
	cfg := cb.Config{
		SlidingWindowSize:                     4,
		MinimumNumberOfCalls:                  2,
		PermittedNumberOfCallsInHalfOpenState: 3,
		TransitionOnResult: func(_ any, err error) cb.Transition {
			consulted++
			if err != nil {
				return cb.OpenFor(time.Hour)
			}
			return cb.Transition{}
		},
	}
	b := mustNew(t, cfg)
	ev := record(b)
	require.NoError(t, b.TransitionToOpenState())
	require.NoError(t, b.TransitionToHalfOpenState())
	p1, p2, p3 := acquire(t, b), acquire(t, b), acquire(t, b)
	p1.OnSuccess()
	p2.OnResult("ok", nil)
	require.Equal(t, cb.Closed, b.State(), "2 successes of the minimum 2")
	assert.Equal(t, 1, consulted, "p2's result, in its HALF_OPEN period")

	p3.OnError(errBoom)
	p3.OnResult("again", errBoom) // a second completion of a probe reports nothing
	assert.Equal(t, cb.Closed, b.State())
	assert.Equal(t, counts{}, countsOf(b.Metrics()), "the new CLOSED window holds nothing of HALF_OPEN")
	assert.Equal(t, 1, consulted, "TransitionOnResult sees no late outcome")

	for _, tc := range []struct {
		name string
		move func()
	}{
		{"Reset", b.Reset},
		{"TransitionToClosedState", func() { require.NoError(t, b.TransitionToClosedState()) }},
	} {
		name := tc.name
		old := acquire(t, b)
		tc.move()
		old.OnError(errBoom)
		old.OnResult(nil, errBoom)
		assert.Equal(t, cb.Closed, b.State(), name)
		assert.Equal(t, counts{}, countsOf(b.Metrics()), name)
		assert.Equal(t, 1, consulted, name)
	}

	old := acquire(t, b)
	require.NoError(t, b.TransitionToMetricsOnlyState())
	old.OnError(errBoom)
	assert.Equal(t, counts{}, countsOf(b.Metrics()), "METRICS_ONLY")
	mo := acquire(t, b)
	mo.OnError(errBoom)
	assert.Equal(t, counts{buffered: 1, failed: 1}, countsOf(b.Metrics()), "its own permit counts")
	assert.Equal(t, 2, consulted)

	require.NoError(t, b.TransitionToClosedState())
	mo.OnError(errBoom)
	require.ErrorIs(t, fail(b), errBoom)
	assert.Equal(t, cb.Open, b.State(), "the CLOSED period's own failure is shown to TransitionOnResult")
	assert.Equal(t, 3, consulted)
	assert.Equal(t, []string{"ERROR late", "ERROR late", "ERROR late", "ERROR late", "ERROR late",
		"ERROR late", "ERROR", "ERROR late", "ERROR"}, outcomeEvents(ev)[2:])
}

// TestLateEventString: a late event says that its outcome was not recorded.
func TestLateEventString(t *testing.T) {
	e := cb.Event{Name: "payment", Type: cb.EventSuccess, Duration: 3 * time.Second, Late: true}
	assert.Equal(t, "CircuitBreaker 'payment' recorded a successful call. Elapsed time: 3s"+
		" (late: permitted by an earlier period, not recorded)", e.String())
	e.Late = false
	assert.Equal(t, "CircuitBreaker 'payment' recorded a successful call. Elapsed time: 3s", e.String())
}

// TestLateOutcomeDoesNotAllocate: an outcome reported after the breaker left the permit's
// period costs no more than one in it.
func TestLateOutcomeDoesNotAllocate(t *testing.T) {
	b := mustNew(t, cb.Config{SlidingWindowSize: 10})
	p := acquire(t, b)
	b.Reset()
	allocs := testing.AllocsPerRun(1000, func() {
		p.OnSuccess()
		p.OnError(errBoom)
		p.OnResult(1, nil)
	})
	assert.Equal(t, 0.0, allocs)
	assert.Equal(t, counts{}, countsOf(b.Metrics()))
	_, err := cb.Execute(context.Background(), b, func(context.Context) (int, error) { return 1, nil })
	require.NoError(t, err)
	assert.Equal(t, counts{buffered: 1, successful: 1}, countsOf(b.Metrics()))
}
