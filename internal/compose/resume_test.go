package compose_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/internal/compose"
	"github.com/levee-go/levee/ratelimiter"
)

func TestRefused(t *testing.T) {
	assert.False(t, compose.Refused(nil, fallback.Outcome{}))
	assert.False(t, compose.Refused(errDown, fallback.Outcome{}))
	assert.True(t, compose.Refused(bulkhead.ErrBulkheadFull, fallback.Outcome{}))
	assert.True(t, compose.Refused(nil, fallback.Outcome{Fallback: true, Cause: circuitbreaker.ErrCallNotPermitted}))
	assert.False(t, compose.Refused(nil, fallback.Outcome{Fallback: true, Cause: errDown}))
}

// RetryAfter is the later of an OPEN breaker's remaining wait and a rate limiter's time to its
// next permission; Watch wakes on a breaker transition and a bulkhead's finished call.
func TestRetryAfterAndWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb, err := circuitbreaker.New("cb", circuitbreaker.Config{WaitDurationInOpenState: 3 * time.Second})
		require.NoError(t, err)
		rl, err := ratelimiter.New("rl", ratelimiter.Config{LimitForPeriod: 1, LimitRefreshPeriod: 5 * time.Second,
			TimeoutDuration: ratelimiter.NoWait})
		require.NoError(t, err)
		bh, err := bulkhead.New("bh", bulkhead.Config{MaxConcurrentCalls: 1})
		require.NoError(t, err)
		c := compose.New[int]().With(compose.Bulkhead[int](bh)).With(compose.RateLimiter[int](rl)).
			With(compose.CircuitBreaker[int](cb))
		var nilChain *compose.Chain[int]
		assert.Equal(t, time.Duration(0), nilChain.RetryAfter())
		assert.Equal(t, time.Duration(0), c.RetryAfter())

		woken := 0
		stop := c.Watch(func() { woken++ })
		require.NoError(t, cb.TransitionToOpenState())
		assert.Equal(t, 1, woken)
		assert.Equal(t, 3*time.Second+1, c.RetryAfter())
		require.NoError(t, rl.AcquirePermission(t.Context(), 1)) // the cycle's one permission
		assert.Equal(t, 5*time.Second, c.RetryAfter())
		require.True(t, bh.TryAcquire())
		bh.Release()
		assert.Equal(t, 2, woken)
		stop()
		require.NoError(t, cb.TransitionToClosedState())
		assert.Equal(t, 2, woken)
	})
}
