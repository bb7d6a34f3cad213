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

// A replica that never heard from Redis does not know how many replicas share the limit: its
// share is 0 and it refuses during an outage, rather than take the whole limit as if alone.
func TestShareUnknownReplicaCountRefuses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := startMini(t)
		m.setDown(true)
		rl := newShared(t, m.client(t), "unknown", leveeredis.Config{
			LimitForPeriod: 10, LimitRefreshPeriod: 100 * time.Millisecond, TimeoutDuration: ratelimiter.NoWait,
		})
		for range 5 { // five cycles of an outage
			for range 12 {
				require.ErrorIs(t, rl.AcquirePermission(t.Context(), 1), ratelimiter.ErrRequestNotPermitted)
			}
			time.Sleep(100 * time.Millisecond)
		}
		mt := rl.Metrics()
		assert.Equal(t, 0, mt.Replicas)
		assert.Equal(t, 0, mt.FallbackLimitForPeriod)
		assert.Equal(t, uint64(0), mt.LocalPermitted)
		assert.Equal(t, uint64(9), mt.StoreRefused) // the 10th failure opens the store breaker
		assert.Equal(t, uint64(51), mt.LocalRefused)
		m.setDown(false)
		time.Sleep(time.Second)
		require.NoError(t, rl.Close())
	})
}

// Shares are max(1, ⌊limit / replicas⌋): 3 replicas under a limit of 2 get 1 each.
func TestShareFloorAtLeastOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := startMini(t)
		var rls []*leveeredis.RateLimiter
		for range 3 {
			rls = append(rls, newShared(t, m.client(t), "floor", leveeredis.Config{
				LimitForPeriod: 2, LimitRefreshPeriod: time.Second, HeartbeatInterval: 50 * time.Millisecond,
			}))
		}
		time.Sleep(60 * time.Millisecond) // the second heartbeat: the count is known
		for _, rl := range rls {
			assert.Equal(t, 3, rl.Metrics().Replicas)
			assert.Equal(t, 1, rl.Metrics().FallbackLimitForPeriod)
		}
	})
}
