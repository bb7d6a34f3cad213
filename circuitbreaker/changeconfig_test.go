package circuitbreaker_test

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cb "github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/internal/logging/logtest"
)

func TestChangeConfigValidatesAsNew(t *testing.T) {
	invalid := []cb.Config{
		{FailureRateThreshold: 101},
		{SlidingWindowSize: -1},
		{MinimumNumberOfCalls: -3},
		{WaitDurationInOpenState: time.Microsecond},
		{WaitDurationInOpenState: time.Second, WaitIntervalFunctionInOpenState: func(int) time.Duration { return time.Second }},
		{PermittedNumberOfCallsInHalfOpenState: -1},
		{RecordErrors: []error{nil}},
		{RecordRejections: []error{errBoom}},
	}
	for _, cfg := range invalid {
		b := mustNew(t, small())
		before := b.Config()
		_, newErr := cb.New("test", cfg)
		require.Error(t, newErr)
		assert.EqualError(t, b.ChangeConfig(cfg), newErr.Error())
		assert.Equal(t, before, b.Config(), "an invalid config changes nothing")
	}
	var nilCB *cb.CircuitBreaker
	assert.ErrorIs(t, nilCB.ChangeConfig(cb.Config{}), cb.ErrNilCircuitBreaker)
}

func TestChangeConfigFillsDefaults(t *testing.T) {
	b := mustNew(t, small())
	require.NoError(t, b.ChangeConfig(cb.Config{FailureRateThreshold: 80}))
	want, err := cb.New("other", cb.Config{FailureRateThreshold: 80})
	require.NoError(t, err)
	assert.Equal(t, want.Config(), b.Config())
	assert.Equal(t, float32(80), b.Config().FailureRateThreshold)
	assert.Equal(t, 100, b.Config().SlidingWindowSize)
}

// TestChangeConfigThresholdFromNextWindow: threshold 50 changed to 80 while CLOSED; the current
// window still opens at 50 %; the OPEN, HALF_OPEN and CLOSED periods that follow use the new
// wait, probe budget and threshold.
func TestChangeConfigThresholdFromNextWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, cb.Config{SlidingWindowSize: 10, MinimumNumberOfCalls: 10, FailureRateThreshold: 50,
			WaitDurationInOpenState: 10 * time.Second, PermittedNumberOfCallsInHalfOpenState: 2})
		for range 5 {
			require.NoError(t, ok(b))
		}
		for range 4 {
			require.ErrorIs(t, fail(b), errBoom)
		}
		next := b.Config()
		next.FailureRateThreshold = 80
		next.WaitDurationInOpenState = 20 * time.Second
		next.PermittedNumberOfCallsInHalfOpenState = 3
		require.NoError(t, b.ChangeConfig(next))
		assert.Equal(t, next, b.Config())

		require.ErrorIs(t, fail(b), errBoom) // 5 of 10
		assert.Equal(t, cb.Open, b.State(), "the current window keeps 50 %")
		assert.Equal(t, float32(50), b.Metrics().FailureRate)
		assert.Equal(t, 20*time.Second+1, b.RemainingWaitInOpenState(), "the OPEN period is built with the new wait")

		time.Sleep(20*time.Second + 1)
		probes := []cb.Permit{acquire(t, b), acquire(t, b), acquire(t, b)}
		assert.Equal(t, cb.HalfOpen, b.State())
		assert.ErrorIs(t, try(b), cb.ErrCallNotPermitted, "3 probes, the new budget")
		for _, p := range probes {
			p.OnSuccess()
		}
		require.Equal(t, cb.Closed, b.State())

		for range 3 {
			require.NoError(t, ok(b))
		}
		for range 7 {
			require.ErrorIs(t, fail(b), errBoom)
		}
		assert.Equal(t, float32(70), b.Metrics().FailureRate)
		assert.Equal(t, cb.Closed, b.State(), "70 % < 80 %")
		require.ErrorIs(t, fail(b), errBoom) // the oldest success leaves the window: 8 of 10
		assert.Equal(t, float32(80), b.Metrics().FailureRate)
		assert.Equal(t, cb.Open, b.State(), "80 % opens the new window")
	})
}

// TestChangeConfigWindowFromNextClosedPeriod changes the window's size and minimum, then its
// type: each applies from the next CLOSED period only.
func TestChangeConfigWindowFromNextClosedPeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, cb.Config{SlidingWindowSize: 10, MinimumNumberOfCalls: 10, FailureRateThreshold: 50})
		require.NoError(t, b.ChangeConfig(cb.Config{SlidingWindowSize: 4, MinimumNumberOfCalls: 4, FailureRateThreshold: 50}))
		for range 4 {
			require.ErrorIs(t, fail(b), errBoom)
		}
		assert.Equal(t, cb.Closed, b.State(), "the window of 10 still needs 10 calls")
		assert.Equal(t, float32(-1), b.Metrics().FailureRate)
		assert.Equal(t, 4, b.Metrics().NumberOfBufferedCalls)

		require.NoError(t, b.TransitionToClosedState())
		for range 3 {
			require.ErrorIs(t, fail(b), errBoom)
		}
		assert.Equal(t, cb.Closed, b.State())
		require.ErrorIs(t, fail(b), errBoom)
		assert.Equal(t, cb.Open, b.State(), "the new window of 4 opens on its 4th failure")
		assert.Equal(t, 4, b.Metrics().NumberOfBufferedCalls)

		// Count-based to time-based (2 calls within 1 second).
		require.NoError(t, b.ChangeConfig(cb.Config{SlidingWindowType: cb.TimeBased, SlidingWindowSize: 1,
			MinimumNumberOfCalls: 2, FailureRateThreshold: 50}))
		require.NoError(t, b.TransitionToClosedState())
		require.ErrorIs(t, fail(b), errBoom)
		time.Sleep(2 * time.Second)
		require.ErrorIs(t, fail(b), errBoom)
		assert.Equal(t, cb.Closed, b.State(), "the first failure left the 1s window")
		assert.Equal(t, 1, b.Metrics().NumberOfBufferedCalls)
		require.ErrorIs(t, fail(b), errBoom)
		assert.Equal(t, cb.Open, b.State())
	})
}

// TestChangeConfigOutcomeJudgedByItsPeriod: a permit granted before a change is classified
// with the lists of the period that granted it; HALF_OPEN keeps its probe budget.
func TestChangeConfigOutcomeJudgedByItsPeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, small())
		p := acquire(t, b)
		cfg := small()
		cfg.IgnoreErrors = []error{errBoom}
		cfg.PermittedNumberOfCallsInHalfOpenState = 4
		require.NoError(t, b.ChangeConfig(cfg))
		p.OnError(errBoom)
		for range 3 {
			require.ErrorIs(t, fail(b), errBoom)
		}
		assert.Equal(t, cb.Open, b.State(), "errBoom is still a failure in this CLOSED period")

		require.NoError(t, b.TransitionToHalfOpenState())
		cfg.PermittedNumberOfCallsInHalfOpenState = 1
		require.NoError(t, b.ChangeConfig(cfg))
		probes := []cb.Permit{acquire(t, b), acquire(t, b), acquire(t, b), acquire(t, b)}
		assert.ErrorIs(t, try(b), cb.ErrCallNotPermitted, "the period keeps its 4 probes")
		probes[0].Release()
		probes[0] = acquire(t, b) // a released probe comes back to its own period
		for _, p := range probes {
			p.OnError(errBoom) // ignored now: the HALF_OPEN period was built after the first change
		}
		assert.Equal(t, cb.HalfOpen, b.State())
		assert.Equal(t, 0, b.Metrics().NumberOfBufferedCalls)
		for range 4 {
			acquire(t, b).OnSuccess()
		}
		assert.Equal(t, cb.Closed, b.State())
	})
}

func TestChangeConfigReplacesTheLogger(t *testing.T) {
	h1, logger1 := logtest.New(slog.LevelInfo)
	h2, logger2 := logtest.New(slog.LevelInfo)
	cfg := small()
	cfg.Logger = logger1
	b, err := cb.New("payment", cfg)
	require.NoError(t, err)

	require.NoError(t, b.ChangeConfig(b.Config()))
	require.NoError(t, b.TransitionToForcedOpenState())
	assert.Equal(t, []logtest.Record{transitionRecord(slog.LevelWarn, "CLOSED", "FORCED_OPEN")}, h1.Records(),
		"the same logger keeps one consumer")

	cfg.Logger = logger2
	require.NoError(t, b.ChangeConfig(cfg))
	require.NoError(t, b.TransitionToClosedState())
	assert.Len(t, h1.Records(), 1)
	assert.Equal(t, []logtest.Record{transitionRecord(slog.LevelInfo, "FORCED_OPEN", "CLOSED")}, h2.Records())

	cfg.Logger = nil
	require.NoError(t, b.ChangeConfig(cfg))
	require.NoError(t, b.TransitionToForcedOpenState())
	assert.Len(t, h1.Records(), 1)
	assert.Len(t, h2.Records(), 1, "nil stops the logging")
}

// TestChangeConfigHammer has 32 goroutines call while another switches the config between a
// window of 4 and one of 8 (each with a minimum of its size): every CLOSED period opens with
// exactly 4 or 8 calls in its window, never with a window of one config and the minimum of the
// other; no probe permit is lost.
func TestChangeConfigHammer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := cb.Config{SlidingWindowSize: 4, MinimumNumberOfCalls: 4, FailureRateThreshold: 50,
			WaitDurationInOpenState: 10 * time.Millisecond, PermittedNumberOfCallsInHalfOpenState: 1,
			AutomaticTransitionFromOpenToHalfOpenEnabled: true}
		b := a
		b.SlidingWindowSize, b.MinimumNumberOfCalls = 8, 8
		b.WaitDurationInOpenState, b.PermittedNumberOfCallsInHalfOpenState = 30*time.Millisecond, 3
		br := mustNew(t, a)
		var openings, torn atomic.Int64
		br.Subscribe(func(e cb.Event) {
			if e.Type != cb.EventStateTransition || e.From != cb.Closed || e.To != cb.Open {
				return
			}
			openings.Add(1)
			m := br.Metrics() // the OPEN period shows the window that opened it
			rem := br.RemainingWaitInOpenState()
			okWindow := m.NumberOfBufferedCalls == 4 || m.NumberOfBufferedCalls == 8
			okWait := rem == 10*time.Millisecond+1 || rem == 30*time.Millisecond+1
			// The failure count is not checked: outcomes of calls still running when the
			// window decided go on landing in it until the OPEN period is in place, and a
			// count-based window is a ring, so they may push out the failures that opened it.
			if !okWindow || !okWait {
				torn.Add(1)
			}
		})
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for g := range 32 {
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					_ = run(br, time.Duration(1+(g+i)%3)*time.Millisecond, []error{nil, errBoom}[(g*7+i)%2])
					time.Sleep(time.Millisecond)
				}
			})
		}
		for i := range 300 {
			time.Sleep(10 * time.Millisecond)
			cfg := a
			if i%2 == 0 {
				cfg = b
			}
			require.NoError(t, br.ChangeConfig(cfg))
		}
		close(stop)
		wg.Wait()
		assert.Zero(t, torn.Load())
		assert.Greater(t, openings.Load(), int64(20))

		// No probe permit was lost: with the calls over, the breaker closes on successes.
		time.Sleep(time.Second)
		for range 8 {
			if br.State() == cb.Closed {
				break
			}
			_ = ok(br)
		}
		assert.Equal(t, cb.Closed, br.State())
	})
}
