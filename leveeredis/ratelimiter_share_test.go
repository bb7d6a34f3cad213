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

// A drop in the count of replicas (which enlarges the share) is believed only once every
// heartbeat of a window of ten intervals (10 × 50ms) saw it, and never during
// an episode: a Redis restarted empty has heard only from the replicas that beat since, and a
// replica that believed its first answers would take up to the whole limit while the others
// still take theirs. A rise is believed at once.
func TestShareDropBelievedAfterAWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := startMini(t)
		var rls []*leveeredis.RateLimiter
		for range 4 {
			rls = append(rls, newShared(t, m.client(t), "drop", leveeredis.Config{
				LimitForPeriod: 12, LimitRefreshPeriod: time.Second, HeartbeatInterval: 50 * time.Millisecond,
				TimeoutDuration: ratelimiter.NoWait,
			}))
		}
		time.Sleep(310 * time.Millisecond) // the count is known, and the window full
		for _, rl := range rls {
			require.Equal(t, 4, rl.Metrics().Replicas)
			require.Equal(t, 3, rl.Metrics().FallbackLimitForPeriod)
		}
		// rls[0] is in an episode: its store breaker is open.
		require.NoError(t, rls[0].StoreCircuitBreaker().TransitionToOpenState())
		require.ErrorIs(t, rls[0].AcquirePermission(t.Context(), 1), ratelimiter.ErrRequestNotPermitted)
		require.True(t, rls[0].Metrics().Degraded)

		require.NoError(t, rls[3].Close()) // one replica leaves
		time.Sleep(155 * time.Millisecond) // three heartbeats saw 3: not yet believed
		for i, rl := range rls[:3] {
			assert.Equal(t, 4, rl.Metrics().Replicas, "replica %d", i)
		}
		time.Sleep(400 * time.Millisecond) // the beats that saw 4 are out of the window
		assert.Equal(t, 4, rls[0].Metrics().Replicas, "no drop during an episode")
		assert.Equal(t, 3, rls[0].Metrics().FallbackLimitForPeriod)
		for _, rl := range rls[1:3] {
			assert.Equal(t, 3, rl.Metrics().Replicas)
			assert.Equal(t, 4, rl.Metrics().FallbackLimitForPeriod)
		}
		// The episode ends at Redis's next answer; then the drop is believed.
		require.NoError(t, rls[0].StoreCircuitBreaker().TransitionToClosedState())
		require.NoError(t, rls[0].AcquirePermission(t.Context(), 1))
		require.False(t, rls[0].Metrics().Degraded)
		time.Sleep(50 * time.Millisecond)
		assert.Equal(t, 3, rls[0].Metrics().Replicas)
		assert.Equal(t, 4, rls[0].Metrics().FallbackLimitForPeriod)

		// A new replica is counted at once.
		rls = append(rls, newShared(t, m.client(t), "drop", leveeredis.Config{
			LimitForPeriod: 12, LimitRefreshPeriod: time.Second, HeartbeatInterval: 50 * time.Millisecond,
			TimeoutDuration: ratelimiter.NoWait,
		}))
		time.Sleep(50 * time.Millisecond)
		for _, rl := range rls[:3] {
			assert.Equal(t, 4, rl.Metrics().Replicas)
		}
	})
}
