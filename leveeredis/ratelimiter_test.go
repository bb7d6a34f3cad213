package leveeredis_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/leveeredis"
	"github.com/levee-go/levee/ratelimiter"
)

func TestCyclesFreeThenRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, rl := startShared(t, "pay", leveeredis.Config{
			LimitForPeriod: 3, LimitRefreshPeriod: 100 * time.Millisecond, TimeoutDuration: ratelimiter.NoWait,
			FallbackLimitForPeriod: 1,
		})
		ctx := t.Context()
		for range 3 {
			require.NoError(t, rl.AcquirePermission(ctx, 1))
		}
		err := rl.AcquirePermission(ctx, 1)
		require.ErrorIs(t, err, ratelimiter.ErrRequestNotPermitted)
		assert.Equal(t, "ratelimiter: RateLimiter 'pay' does not permit further calls", err.Error())
		time.Sleep(100 * time.Millisecond)
		require.NoError(t, rl.AcquirePermission(ctx, 3))
		m2 := rl.Metrics()
		assert.Equal(t, uint64(4), m2.Permitted)
		assert.Equal(t, uint64(1), m2.Refused)
		assert.Equal(t, 0, m2.AvailablePermissions)
		assert.Equal(t, 3, m2.LimitForPeriod)
	})
}
