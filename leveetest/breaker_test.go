package leveetest_test

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveetest"
)

var allStates = []circuitbreaker.State{
	circuitbreaker.Closed, circuitbreaker.Open, circuitbreaker.HalfOpen,
	circuitbreaker.Disabled, circuitbreaker.ForcedOpen, circuitbreaker.MetricsOnly,
}

func TestForceStateFromEveryState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, from := range allStates {
			for _, to := range allStates {
				cb, err := circuitbreaker.New("cb", circuitbreaker.Config{})
				require.NoError(t, err)
				leveetest.ForceState(t, cb, from)
				require.Equal(t, from, cb.State())
				leveetest.ForceState(t, cb, to)
				assert.Equal(t, to, cb.State(), "%v -> %v", from, to)
				// Leave no OPEN timer behind in the bubble.
				require.NoError(t, cb.TransitionToDisabledState())
			}
		}
	})
}

func TestForceStateHalfOpenFromClosedPublishesBothTransitions(t *testing.T) {
	cb, err := circuitbreaker.New("cb", circuitbreaker.Config{})
	require.NoError(t, err)
	var got []string
	unsubscribe := cb.OnStateChange(func(from, to circuitbreaker.State) {
		got = append(got, from.String()+"->"+to.String())
	})
	defer unsubscribe()
	leveetest.ForceState(t, cb, circuitbreaker.HalfOpen)
	assert.Equal(t, []string{"CLOSED->OPEN", "OPEN->HALF_OPEN"}, got)
	require.NoError(t, cb.TransitionToDisabledState())
}

func TestForceStateFailures(t *testing.T) {
	f := run(t, func(tb testing.TB) { leveetest.ForceState(tb, nil, circuitbreaker.Open) })
	assert.True(t, f.fatal)
	assert.Equal(t, []string{"leveetest: ForceState(OPEN): nil *circuitbreaker.CircuitBreaker"}, f.errors)

	cb, err := circuitbreaker.New("payment", circuitbreaker.Config{})
	require.NoError(t, err)
	f = run(t, func(tb testing.TB) { leveetest.ForceState(tb, cb, circuitbreaker.State(9)) })
	assert.True(t, f.fatal)
	assert.Equal(t, []string{`leveetest: ForceState(State(9)) of breaker "payment": unknown state State(9)`}, f.errors)

	// A subscriber that moves the breaker on: ForceState sees the breaker is not where asked.
	unsubscribe := cb.OnStateChange(func(from, to circuitbreaker.State) {
		if to == circuitbreaker.ForcedOpen {
			_ = cb.TransitionToDisabledState()
		}
	})
	defer unsubscribe()
	f = run(t, func(tb testing.TB) { leveetest.ForceState(tb, cb, circuitbreaker.ForcedOpen) })
	assert.True(t, f.fatal)
	assert.Equal(t, []string{`leveetest: ForceState(FORCED_OPEN) of breaker "payment": the breaker is DISABLED`}, f.errors)
}
