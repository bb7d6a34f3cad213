package circuitbreaker_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cb "github.com/levee-go/levee/circuitbreaker"
)

// TestPitfall5_OpenKeepsPreviousMetricsEveryOtherEntryResets.
func TestPitfall5_OpenKeepsPreviousMetricsEveryOtherEntryResets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, small())
		require.NoError(t, ok(b))
		require.NoError(t, ok(b))
		require.ErrorIs(t, fail(b), errBoom)
		late := acquire(t, b) // a call permitted in CLOSED that ends after the breaker opened
		require.ErrorIs(t, fail(b), errBoom)
		require.Equal(t, cb.Open, b.State())
		m := b.Metrics()
		assert.Equal(t, float32(50), m.FailureRate, "OPEN shows the CLOSED window that opened it")
		assert.Equal(t, counts{buffered: 4, failed: 2, successful: 2}, countsOf(m))

		// the not-permitted counter continues; a late outcome of the CLOSED period leaves the
		// window that opened the breaker as it was (Resilience4j records it there: 3 of 4, 75%)
		require.ErrorIs(t, ok(b), cb.ErrCallNotPermitted)
		require.ErrorIs(t, ok(b), cb.ErrCallNotPermitted)
		late.OnError(errBoom)
		m = b.Metrics()
		assert.Equal(t, counts{buffered: 4, failed: 2, successful: 2, notPermitted: 2}, countsOf(m))
		assert.Equal(t, float32(50), m.FailureRate)
		assert.Equal(t, cb.Open, b.State(), "OPEN never transitions on outcomes")

		// HALF_OPEN starts fresh
		time.Sleep(10*time.Second + 1)
		probe := acquire(t, b)
		m = b.Metrics()
		assert.Equal(t, cb.HalfOpen, m.State)
		assert.Equal(t, counts{}, countsOf(m))
		assert.Equal(t, float32(-1), m.FailureRate)

		// HALF_OPEN -> OPEN shows the half-open numbers
		probe.OnError(errBoom)
		acquire(t, b).OnSuccess()
		require.Equal(t, cb.Open, b.State(), "1 of 2 = 50% reopens")
		m = b.Metrics()
		assert.Equal(t, counts{buffered: 2, failed: 1, successful: 1}, countsOf(m))
		assert.Equal(t, float32(50), m.FailureRate)

		// CLOSED starts fresh
		require.NoError(t, b.TransitionToClosedState())
		assert.Equal(t, counts{}, countsOf(b.Metrics()))
	})
}

func TestOpenAfterManualTransitionKeepsMetrics(t *testing.T) {
	b := mustNew(t, cb.Config{SlidingWindowSize: 10, MinimumNumberOfCalls: 3})
	require.NoError(t, ok(b))
	require.ErrorIs(t, fail(b), errBoom)
	require.NoError(t, ok(b))
	require.NoError(t, b.TransitionToOpenState())
	assert.Equal(t, float32(33.333332), b.Metrics().FailureRate)
	require.NoError(t, b.TransitionToOpenState())
	assert.Equal(t, 3, b.Metrics().NumberOfBufferedCalls, "OPEN to OPEN still shows the inherited window")
	require.NoError(t, b.TransitionToDisabledState())
	assert.Equal(t, counts{}, countsOf(b.Metrics()))
}

// TestPitfall6_OpenToHalfOpenIsStrictAndLazy: permission only once time.Now() is strictly after
// the deadline, and only a permission request moves the breaker.
func TestPitfall6_OpenToHalfOpenIsStrictAndLazy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, small())
		ev := record(b)
		require.NoError(t, b.TransitionToOpenState())
		time.Sleep(10 * time.Second) // exactly the deadline
		assert.ErrorIs(t, try(b), cb.ErrCallNotPermitted, "now == deadline is not after it")
		time.Sleep(time.Nanosecond)
		assert.Equal(t, cb.Open, b.State(), "reading the state does not transition")
		assert.Equal(t, cb.Open, b.Metrics().State, "neither do metrics")
		time.Sleep(time.Hour)
		assert.Equal(t, cb.Open, b.State())
		assert.NoError(t, try(b))
		assert.Equal(t, cb.HalfOpen, b.State())
		assert.Equal(t, []string{"CLOSED>OPEN", "OPEN>HALF_OPEN"}, ev.transitions())
	})
}

// TestPitfall6_WaitAttemptsGrowAcrossReopeningsAndResetOnClosed.
func TestPitfall6_WaitAttemptsGrowAcrossReopeningsAndResetOnClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var attempts []int
		cfg := small()
		cfg.WaitDurationInOpenState = 0
		cfg.WaitIntervalFunctionInOpenState = func(a int) time.Duration {
			attempts = append(attempts, a)
			return time.Duration(a) * time.Second
		}
		b := mustNew(t, cfg)
		for range 4 {
			require.ErrorIs(t, fail(b), errBoom)
		}
		require.Equal(t, cb.Open, b.State())
		for a := 1; a <= 3; a++ {
			time.Sleep(time.Duration(a) * time.Second) // the wait of attempt a, exactly
			require.ErrorIs(t, try(b), cb.ErrCallNotPermitted, "attempt %d waits %ds", a, a)
			time.Sleep(time.Nanosecond)
			require.ErrorIs(t, fail(b), errBoom)
			require.Equal(t, cb.HalfOpen, b.State())
			require.ErrorIs(t, fail(b), errBoom)
			require.Equal(t, cb.Open, b.State())
		}
		assert.Equal(t, []int{1, 2, 3, 4}, attempts)

		time.Sleep(4*time.Second + 1)
		require.NoError(t, ok(b))
		require.NoError(t, ok(b))
		require.Equal(t, cb.Closed, b.State())
		for range 4 {
			require.ErrorIs(t, fail(b), errBoom)
		}
		require.Equal(t, cb.Open, b.State())
		assert.Equal(t, []int{1, 2, 3, 4, 1}, attempts, "CLOSED resets the attempts")

		// FORCED_OPEN also counts as an attempt, and HALF_OPEN keeps it
		require.NoError(t, b.TransitionToForcedOpenState())
		require.NoError(t, b.TransitionToHalfOpenState())
		require.NoError(t, b.TransitionToOpenState())
		assert.Equal(t, []int{1, 2, 3, 4, 1, 3}, attempts)
	})
}

// TestPitfall6_OpenStateForAndUntilDoNotIncrementAttempts.
func TestPitfall6_OpenStateForAndUntilDoNotIncrementAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var attempts []int
		cfg := small()
		cfg.WaitDurationInOpenState = 0
		cfg.WaitIntervalFunctionInOpenState = func(a int) time.Duration { attempts = append(attempts, a); return time.Second }
		b := mustNew(t, cfg)
		require.NoError(t, b.TransitionToOpenStateFor(5*time.Second))
		time.Sleep(5 * time.Second)
		require.ErrorIs(t, try(b), cb.ErrCallNotPermitted)
		time.Sleep(1)
		require.NoError(t, try(b))
		require.NoError(t, b.TransitionToOpenStateUntil(time.Now().Add(3*time.Second)))
		time.Sleep(3 * time.Second)
		require.ErrorIs(t, try(b), cb.ErrCallNotPermitted)
		time.Sleep(1)
		require.NoError(t, try(b))
		require.Empty(t, attempts, "neither called the interval function")
		require.NoError(t, b.TransitionToOpenState())
		assert.Equal(t, []int{1}, attempts, "attempts were still 0")

		require.NoError(t, b.TransitionToOpenStateFor(-time.Second))
		assert.NoError(t, try(b), "a wait in the past ends at once")
		require.NoError(t, b.TransitionToOpenStateUntil(time.Now().Add(-time.Minute)))
		assert.NoError(t, try(b))
		assert.Equal(t, cb.HalfOpen, b.State())
	})
}

func TestAutomaticTransitionFromOpenToHalfOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := small()
		cfg.AutomaticTransitionFromOpenToHalfOpenEnabled = true
		b := mustNew(t, cfg)
		ev := record(b)
		for range 4 {
			require.ErrorIs(t, fail(b), errBoom)
		}
		require.Equal(t, cb.Open, b.State())
		time.Sleep(10*time.Second - 1)
		synctest.Wait()
		assert.Equal(t, cb.Open, b.State())
		time.Sleep(1)
		synctest.Wait()
		assert.Equal(t, cb.HalfOpen, b.State(), "moved by the timer, without a request")
		assert.Equal(t, []string{"CLOSED>OPEN", "OPEN>HALF_OPEN"}, ev.transitions())
	})
}

func TestAutomaticTransitionTimerStopsWhenOpenIsLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := small()
		cfg.AutomaticTransitionFromOpenToHalfOpenEnabled = true
		b := mustNew(t, cfg)
		ev := record(b)
		require.NoError(t, b.TransitionToOpenState())
		time.Sleep(5 * time.Second)
		require.NoError(t, b.TransitionToClosedState())
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, cb.Closed, b.State())
		assert.Equal(t, []string{"CLOSED>OPEN", "OPEN>CLOSED"}, ev.transitions())

		// a restarted OPEN period has its own timer; the old one does not fire
		require.NoError(t, b.TransitionToOpenState())
		time.Sleep(5 * time.Second)
		require.NoError(t, b.TransitionToOpenState()) // same state: wait restarts
		time.Sleep(5*time.Second + 1)
		synctest.Wait()
		assert.Equal(t, cb.Open, b.State())
		time.Sleep(5 * time.Second)
		synctest.Wait()
		assert.Equal(t, cb.HalfOpen, b.State())

		// Reset stops it too
		require.NoError(t, b.TransitionToOpenState())
		b.Reset()
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, cb.Closed, b.State())
	})
}

func TestAutomaticTransitionWithOpenStateUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := small()
		cfg.AutomaticTransitionFromOpenToHalfOpenEnabled = true
		b := mustNew(t, cfg)
		require.NoError(t, b.TransitionToOpenStateFor(3*time.Second))
		time.Sleep(3 * time.Second)
		synctest.Wait()
		assert.Equal(t, cb.HalfOpen, b.State())
	})
}

func TestInitialOpenStateArmsItsTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := small()
		cfg.AutomaticTransitionFromOpenToHalfOpenEnabled = true
		cfg.InitialState = cb.Open
		b := mustNew(t, cfg)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		assert.Equal(t, cb.HalfOpen, b.State())
	})
}

func TestMaxWaitDurationInHalfOpenState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var attempts []int
		cfg := small()
		cfg.WaitDurationInOpenState = 0
		cfg.WaitIntervalFunctionInOpenState = func(a int) time.Duration { attempts = append(attempts, a); return 10 * time.Second }
		cfg.MaxWaitDurationInHalfOpenState = 5 * time.Second
		b := mustNew(t, cfg)
		ev := record(b)
		require.NoError(t, b.TransitionToOpenState())
		time.Sleep(10*time.Second + 1)
		acquire(t, b) // a probe that never reports back
		require.Equal(t, cb.HalfOpen, b.State())
		time.Sleep(5*time.Second - 1)
		synctest.Wait()
		require.Equal(t, cb.HalfOpen, b.State())
		time.Sleep(1)
		synctest.Wait()
		assert.Equal(t, cb.Open, b.State(), "HALF_OPEN gave up waiting for its probes")
		assert.Equal(t, []int{1, 2}, attempts, "the move counts as a reopening")
		assert.Equal(t, []string{"CLOSED>OPEN", "OPEN>HALF_OPEN", "HALF_OPEN>OPEN"}, ev.transitions())

		// a HALF_OPEN period that decides in time stops its timer
		time.Sleep(10*time.Second + 1)
		require.NoError(t, ok(b))
		require.NoError(t, ok(b))
		require.Equal(t, cb.Closed, b.State())
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, cb.Closed, b.State())
	})
}

func TestHalfOpenReopensOnFailureAndClosesOnSuccess(t *testing.T) {
	b := mustNew(t, small())
	ev := record(b)
	require.NoError(t, b.TransitionToOpenState())
	require.NoError(t, b.TransitionToHalfOpenState())
	require.NoError(t, ok(b))
	require.NoError(t, ok(b))
	assert.Equal(t, cb.Closed, b.State())

	require.NoError(t, b.TransitionToOpenState())
	require.NoError(t, b.TransitionToHalfOpenState())
	require.NoError(t, ok(b))
	require.ErrorIs(t, fail(b), errBoom)
	assert.Equal(t, cb.Open, b.State())
	assert.Equal(t, []string{"CLOSED>OPEN", "OPEN>HALF_OPEN", "HALF_OPEN>CLOSED", "CLOSED>OPEN", "OPEN>HALF_OPEN", "HALF_OPEN>OPEN"}, ev.transitions())
	for _, e := range ev.list() {
		assert.NotEqual(t, cb.EventFailureRateExceeded, e.Type, "no rate events for half-open decisions")
	}
}

func TestHalfOpenRefusesBeyondItsPermits(t *testing.T) {
	b := mustNew(t, small())
	require.NoError(t, b.TransitionToOpenState())
	require.NoError(t, b.TransitionToHalfOpenState())
	p := acquire(t, b)
	acquire(t, b)
	err := try(b)
	require.ErrorIs(t, err, cb.ErrCallNotPermitted)
	assert.Equal(t, "circuitbreaker: CircuitBreaker 'test' is HALF_OPEN and does not permit further calls", err.Error())
	p.Release()
	assert.NoError(t, try(b), "a released permit can be taken again")
	assert.Error(t, try(b))
	p.Release() // a second release of the same permit gives nothing back
	assert.Error(t, try(b))
	assert.Equal(t, 3, b.Metrics().NumberOfNotPermittedCalls)
}

// A permit granted outside HALF_OPEN has nothing to give back, even once the breaker is
// HALF_OPEN: Release goes to the period that granted it.
func TestReleaseOutsideHalfOpenDoesNothing(t *testing.T) {
	cfg := small()
	cfg.IgnoreErrors = []error{errInvalid}
	b := mustNew(t, cfg)
	closed := acquire(t, b)
	closed.Release()
	require.NoError(t, b.TransitionToOpenState())
	closed.Release()
	assert.ErrorIs(t, try(b), cb.ErrCallNotPermitted)
	require.NoError(t, b.TransitionToHalfOpenState())
	acquire(t, b)
	acquire(t, b)
	closed.Release()
	closed.OnError(errInvalid) // ignored: released, to the CLOSED period
	assert.ErrorIs(t, try(b), cb.ErrCallNotPermitted, "still 2 probes, not 3")
}
