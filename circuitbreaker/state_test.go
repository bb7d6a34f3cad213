package circuitbreaker_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cb "github.com/levee-go/levee/circuitbreaker"
)

var allStates = []cb.State{cb.Closed, cb.Open, cb.HalfOpen, cb.Disabled, cb.ForcedOpen, cb.MetricsOnly}

func TestStateString(t *testing.T) {
	want := []string{"CLOSED", "OPEN", "HALF_OPEN", "DISABLED", "FORCED_OPEN", "METRICS_ONLY"}
	for i, s := range allStates {
		assert.Equal(t, want[i], s.String())
	}
	assert.Equal(t, "State(6)", cb.State(6).String())
	assert.Equal(t, "State(-1)", cb.State(-1).String())
	assert.Equal(t, "COUNT_BASED", cb.CountBased.String())
	assert.Equal(t, "TIME_BASED", cb.TimeBased.String())
	assert.Equal(t, "SlidingWindowType(7)", cb.SlidingWindowType(7).String())
}

func transitionTo(b *cb.CircuitBreaker, s cb.State) error {
	switch s {
	case cb.Closed:
		return b.TransitionToClosedState()
	case cb.Open:
		return b.TransitionToOpenState()
	case cb.HalfOpen:
		return b.TransitionToHalfOpenState()
	case cb.Disabled:
		return b.TransitionToDisabledState()
	case cb.ForcedOpen:
		return b.TransitionToForcedOpenState()
	case cb.MetricsOnly:
		return b.TransitionToMetricsOnlyState()
	}
	panic("unknown state")
}

// TestPitfall8_ClosedToHalfOpenAndMetricsOnlyToOpenOrHalfOpenAreIllegal checks all 36 pairs of
// Resilience4j's transition table.
func TestPitfall8_ClosedToHalfOpenAndMetricsOnlyToOpenOrHalfOpenAreIllegal(t *testing.T) {
	illegal := map[[2]cb.State]bool{
		{cb.Closed, cb.HalfOpen}:      true,
		{cb.MetricsOnly, cb.Open}:     true,
		{cb.MetricsOnly, cb.HalfOpen}: true,
	}
	for _, from := range allStates {
		for _, to := range allStates {
			t.Run(from.String()+"_to_"+to.String(), func(t *testing.T) {
				b, err := cb.New("payment", cb.Config{InitialState: from})
				require.NoError(t, err)
				ev := record(b)
				err = transitionTo(b, to)
				if illegal[[2]cb.State{from, to}] {
					require.Error(t, err)
					assert.ErrorIs(t, err, cb.ErrIllegalStateTransition)
					var ite *cb.IllegalStateTransitionError
					require.ErrorAs(t, err, &ite)
					assert.Equal(t, cb.IllegalStateTransitionError{Name: "payment", From: from, To: to}, *ite)
					assert.Equal(t, "circuitbreaker: CircuitBreaker 'payment' tried an illegal state transition from "+from.String()+" to "+to.String(), err.Error())
					assert.Equal(t, from, b.State(), "state unchanged")
					assert.Empty(t, ev.types())
					return
				}
				require.NoError(t, err)
				assert.Equal(t, to, b.State())
				if from == to {
					assert.Empty(t, ev.types(), "a same-state transition is silent")
					return
				}
				evs := ev.list()
				require.Len(t, evs, 1)
				assert.Equal(t, cb.EventStateTransition, evs[0].Type)
				assert.Equal(t, from, evs[0].From)
				assert.Equal(t, to, evs[0].To)
				assert.Equal(t, "payment", evs[0].Name)
			})
		}
	}
}

func TestSameStateTransitionResetsSilently(t *testing.T) {
	t.Run("CLOSED gets a fresh window", func(t *testing.T) {
		b := mustNew(t, small())
		ev := record(b)
		require.ErrorIs(t, fail(b), errBoom)
		require.NoError(t, ok(b))
		require.Equal(t, 2, b.Metrics().NumberOfBufferedCalls)
		ev.reset()
		require.NoError(t, b.TransitionToClosedState())
		assert.Equal(t, counts{}, countsOf(b.Metrics()))
		assert.Empty(t, ev.types())
	})
	t.Run("HALF_OPEN gets a fresh permit budget", func(t *testing.T) {
		b := mustNew(t, small())
		require.NoError(t, b.TransitionToOpenState())
		require.NoError(t, b.TransitionToHalfOpenState())
		require.NoError(t, try(b))
		require.NoError(t, try(b))
		require.ErrorIs(t, try(b), cb.ErrCallNotPermitted)
		require.Equal(t, 1, b.Metrics().NumberOfNotPermittedCalls)
		ev := record(b)
		require.NoError(t, b.TransitionToHalfOpenState())
		assert.Empty(t, ev.types())
		assert.Equal(t, 0, b.Metrics().NumberOfNotPermittedCalls)
		assert.NoError(t, try(b))
		assert.NoError(t, try(b))
		assert.ErrorIs(t, try(b), cb.ErrCallNotPermitted)
	})
	t.Run("OPEN restarts its wait", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := mustNew(t, small())
			require.NoError(t, b.TransitionToOpenState())
			time.Sleep(8 * time.Second)
			require.NoError(t, b.TransitionToOpenState())
			time.Sleep(8 * time.Second) // 16s after the first opening, 8s after the second
			assert.ErrorIs(t, try(b), cb.ErrCallNotPermitted)
			time.Sleep(2*time.Second + 1)
			assert.NoError(t, try(b))
			assert.Equal(t, cb.HalfOpen, b.State())
		})
	})
	t.Run("FORCED_OPEN gets a fresh not-permitted counter", func(t *testing.T) {
		b := mustNew(t, cb.Config{InitialState: cb.ForcedOpen})
		require.Error(t, try(b))
		require.Equal(t, 1, b.Metrics().NumberOfNotPermittedCalls)
		require.NoError(t, b.TransitionToForcedOpenState())
		assert.Equal(t, 0, b.Metrics().NumberOfNotPermittedCalls)
	})
}

func TestReset(t *testing.T) {
	for _, from := range allStates {
		t.Run(from.String(), func(t *testing.T) {
			b, err := cb.New("payment", cb.Config{InitialState: from, SlidingWindowSize: 10, MinimumNumberOfCalls: 10})
			require.NoError(t, err)
			_ = fail(b)
			_ = try(b)
			ev := record(b)
			b.Reset()
			assert.Equal(t, cb.Closed, b.State())
			assert.Equal(t, counts{}, countsOf(b.Metrics()))
			evs := ev.list()
			if from == cb.Closed {
				require.Len(t, evs, 1)
			} else {
				require.Len(t, evs, 2)
				assert.Equal(t, cb.EventStateTransition, evs[0].Type)
				assert.Equal(t, from, evs[0].From)
				assert.Equal(t, cb.Closed, evs[0].To)
			}
			assert.Equal(t, cb.EventReset, evs[len(evs)-1].Type)
			assert.Equal(t, "payment", evs[len(evs)-1].Name)
		})
	}
}

func TestResetClearsOpeningAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen []int
		cfg := small()
		cfg.WaitDurationInOpenState = 0
		cfg.WaitIntervalFunctionInOpenState = func(a int) time.Duration { seen = append(seen, a); return time.Second }
		b := mustNew(t, cfg)
		require.NoError(t, b.TransitionToOpenState())
		require.NoError(t, b.TransitionToOpenState())
		b.Reset()
		require.NoError(t, b.TransitionToOpenState())
		assert.Equal(t, []int{1, 2, 1}, seen)
	})
}

func TestIllegalTransitionErrorIsNotARejection(t *testing.T) {
	b := mustNew(t, cb.Config{})
	err := b.TransitionToHalfOpenState()
	require.Error(t, err)
	assert.False(t, errors.Is(err, cb.ErrCallNotPermitted))
}
