package stream_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/stream"
)

// TestSubscribePermitsAboveTheLimitIsNotChargedToTheBreaker: Permits(6) on a limiter of 5
// (for instance after ChangeLimitForPeriod lowered it) is the subscriber's mistake; the source
// is never called. The breaker used to record each such attempt as a failure of the
// dependency, so a healthy dependency's breaker opened for every caller, and a HALF_OPEN probe
// was spent on it. The permission now goes back unrecorded.
func TestSubscribePermitsAboveTheLimitIsNotChargedToTheBreaker(t *testing.T) {
	rl := newRateLimiter(t, ratelimiter.Config{LimitForPeriod: 5, LimitRefreshPeriod: time.Hour})
	cb := newBreaker(t, circuitbreaker.Config{SlidingWindowSize: 2, MinimumNumberOfCalls: 2})
	ps := levee.Patterns{CircuitBreaker: cb, RateLimiter: rl}
	for range 2 {
		items, err := stream.Subscribe(context.Background(), ps, numbers(nil, 0, 1, nil), stream.Permits(6))
		require.NoError(t, err)
		all := drain(items)
		require.Len(t, all, 1)
		assert.ErrorIs(t, all[0].Err, ratelimiter.ErrInvalidPermits)
	}
	assert.Equal(t, circuitbreaker.Metrics{State: circuitbreaker.Closed, FailureRate: -1, SlowCallRate: -1}, cb.Metrics())

	half := newBreaker(t, circuitbreaker.Config{InitialState: circuitbreaker.HalfOpen,
		PermittedNumberOfCallsInHalfOpenState: 1})
	items, err := stream.Subscribe(context.Background(), levee.Patterns{CircuitBreaker: half, RateLimiter: rl},
		numbers(nil, 0, 1, nil), stream.Permits(6))
	require.NoError(t, err)
	require.Len(t, drain(items), 1)
	assert.Equal(t, circuitbreaker.HalfOpen, half.State())
	p, err := half.Acquire() // the probe came back
	require.NoError(t, err)
	p.Release()
}
