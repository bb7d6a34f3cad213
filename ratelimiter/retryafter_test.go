package ratelimiter_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/ratelimiter"
)

var _ levee.RetryAdvisor = (*ratelimiter.RateLimiter)(nil)

// RetryAfter is the wait until the next free permission: 0 while one is free, then what is left
// of the cycle, shrinking as the cycle runs, and 0 again once the next cycle has begun.
func TestRetryAfterIsTheWaitForTheNextPermission(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl, err := ratelimiter.New("quotes", ratelimiter.Config{LimitForPeriod: 2, LimitRefreshPeriod: time.Second,
			TimeoutDuration: ratelimiter.NoWait})
		require.NoError(t, err)
		assert.Equal(t, time.Duration(0), rl.RetryAfter())
		for range 2 {
			require.NoError(t, rl.AcquirePermission(t.Context(), 1))
		}
		assert.Equal(t, time.Second, rl.RetryAfter())
		time.Sleep(300 * time.Millisecond)
		assert.Equal(t, 700*time.Millisecond, rl.RetryAfter())
		assert.Equal(t, rl.Metrics().NanosToWait, rl.RetryAfter())
		time.Sleep(700 * time.Millisecond)
		assert.Equal(t, time.Duration(0), rl.RetryAfter())
		assert.Equal(t, time.Duration(0), (*ratelimiter.RateLimiter)(nil).RetryAfter())
	})
}
