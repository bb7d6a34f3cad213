package circuitbreaker_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cb "github.com/levee-go/levee/circuitbreaker"
)

// TestTransitionToStateAfterWaitDurationClosed: with ClosedAfterWait, a HALF_OPEN period whose
// probes do not decide within MaxWaitDurationInHalfOpenState moves to a fresh CLOSED period at
// exactly that instant, as Resilience4j 2.4's transitionToStateAfterWaitDuration(CLOSED).
func TestTransitionToStateAfterWaitDurationClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var attempts []int
		cfg := small()
		cfg.WaitDurationInOpenState = 0
		cfg.WaitIntervalFunctionInOpenState = func(a int) time.Duration { attempts = append(attempts, a); return 10 * time.Second }
		cfg.MaxWaitDurationInHalfOpenState = 5 * time.Second
		cfg.TransitionToStateAfterWaitDuration = cb.ClosedAfterWait
		b := mustNew(t, cfg)
		ev := record(b)
		for range 4 {
			require.ErrorIs(t, fail(b), errBoom)
		}
		require.Equal(t, cb.Open, b.State())
		time.Sleep(10*time.Second + 1)
		probe := acquire(t, b) // a probe that has not reported back
		require.Equal(t, cb.HalfOpen, b.State())
		time.Sleep(5*time.Second - 1)
		synctest.Wait()
		require.Equal(t, cb.HalfOpen, b.State())
		time.Sleep(1)
		synctest.Wait()
		assert.Equal(t, cb.Closed, b.State(), "HALF_OPEN gave up waiting and closed")
		assert.Equal(t, counts{}, countsOf(b.Metrics()), "a fresh CLOSED window")
		assert.Equal(t, []cb.EventType{cb.EventError, cb.EventError, cb.EventError, cb.EventError,
			cb.EventFailureRateExceeded, cb.EventStateTransition, cb.EventStateTransition, cb.EventStateTransition}, ev.types())
		assert.Equal(t, []string{"CLOSED>OPEN", "OPEN>HALF_OPEN", "HALF_OPEN>CLOSED"}, ev.transitions())

		ev.reset()
		probe.OnSuccess() // the late probe's outcome is published, not recorded in the CLOSED window
		assert.Equal(t, counts{}, countsOf(b.Metrics()))
		require.Len(t, ev.list(), 1)
		assert.Equal(t, cb.EventSuccess, ev.list()[0].Type)
		assert.True(t, ev.list()[0].Late)

		// CLOSED reset the attempts: the next opening is attempt 1 again (four failures: the
		// window holds only this period's calls)
		for range 3 {
			require.ErrorIs(t, fail(b), errBoom)
		}
		require.Equal(t, cb.Closed, b.State(), "3 calls, below the minimum of 4")
		require.ErrorIs(t, fail(b), errBoom)
		require.Equal(t, cb.Open, b.State())
		assert.Equal(t, []int{1, 1}, attempts)
	})
}

// TestTransitionToStateAfterWaitDurationOpenIsTheDefault: the zero value keeps Resilience4j's
// default, an opening that counts as an attempt.
func TestTransitionToStateAfterWaitDurationOpenIsTheDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var attempts []int
		cfg := small()
		cfg.WaitDurationInOpenState = 0
		cfg.WaitIntervalFunctionInOpenState = func(a int) time.Duration { attempts = append(attempts, a); return 10 * time.Second }
		cfg.MaxWaitDurationInHalfOpenState = 5 * time.Second
		b := mustNew(t, cfg)
		assert.Equal(t, cb.OpenAfterWait, b.Config().TransitionToStateAfterWaitDuration)
		ev := record(b)
		require.NoError(t, b.TransitionToOpenState())
		require.NoError(t, b.TransitionToHalfOpenState())
		time.Sleep(5 * time.Second)
		synctest.Wait()
		assert.Equal(t, cb.Open, b.State())
		assert.Equal(t, []string{"CLOSED>OPEN", "OPEN>HALF_OPEN", "HALF_OPEN>OPEN"}, ev.transitions())
		assert.Equal(t, []int{1, 2}, attempts)
	})
}

func TestStateAfterWaitString(t *testing.T) {
	assert.Equal(t, "OPEN", cb.OpenAfterWait.String())
	assert.Equal(t, "CLOSED", cb.ClosedAfterWait.String())
	assert.Equal(t, "StateAfterWait(7)", cb.StateAfterWait(7).String())
}
