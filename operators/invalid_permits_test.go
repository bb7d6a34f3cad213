package operators_test

import (
	"context"
	"testing"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/operators"
	"github.com/levee-go/levee/ratelimiter"
)

// TestGuardPermitsAboveTheLimitIsNotChargedToTheBreaker: under Guard, Permits(6) on a limiter
// of 5 fails each subscription with ErrInvalidPermits before the source is built. The
// breaker used to record it as a failure of the dependency (two subscriptions opened a
// breaker of window 2 for every caller, and in HALF_OPEN the probe was spent); the
// permission now goes back unrecorded.
func TestGuardPermitsAboveTheLimitIsNotChargedToTheBreaker(t *testing.T) {
	rl := newRateLimiter(t, ratelimiter.Config{LimitForPeriod: 5, LimitRefreshPeriod: time.Hour})
	src := func(context.Context) (rxgo.Observable, error) { return rxgo.Just(1)(), nil }

	cb := newBreaker(t, circuitbreaker.Config{SlidingWindowSize: 2, MinimumNumberOfCalls: 2})
	obs := mustGuard(t)(operators.Guard(levee.Patterns{CircuitBreaker: cb, RateLimiter: rl}, nil, src, operators.Permits(6)))
	for range 2 {
		_, items := observe(obs)
		require.Len(t, items, 1)
		assert.ErrorIs(t, items[0].E, ratelimiter.ErrInvalidPermits)
	}
	assert.Equal(t, circuitbreaker.Metrics{State: circuitbreaker.Closed, FailureRate: -1, SlowCallRate: -1}, cb.Metrics())

	half := newBreaker(t, circuitbreaker.Config{InitialState: circuitbreaker.HalfOpen,
		PermittedNumberOfCallsInHalfOpenState: 1})
	_, items := observe(mustGuard(t)(operators.Guard(levee.Patterns{CircuitBreaker: half, RateLimiter: rl}, nil, src,
		operators.Permits(6))))
	require.Len(t, items, 1)
	assert.Equal(t, circuitbreaker.HalfOpen, half.State())
	p, err := half.Acquire() // the probe came back
	require.NoError(t, err)
	p.Release()
}
