package leveeredis_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveeredis"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/registry"
)

// A shared limiter and a shared breaker join a registry through the interfaces the core
// owns, with their figures in its shapes.
func TestSharedPatternsInARegistry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, rl := startShared(t, "partner", leveeredis.Config{LimitForPeriod: 2, LimitRefreshPeriod: time.Second,
			ReplicaID: "replica-a", TimeoutDuration: ratelimiter.NoWait})
		ctx := context.Background()
		for range 3 {
			_ = rl.AcquirePermission(ctx, 1)
		}
		reg := registry.New()
		require.NoError(t, reg.AddSharedRateLimiter(rl))
		got, ok := reg.FindSharedRateLimiter("partner")
		require.True(t, ok)
		m := got.StoreLimiterMetrics()
		assert.Equal(t, uint64(2), m.Permitted)
		assert.Equal(t, uint64(1), m.Refused)
		assert.Equal(t, 2, m.LimitForPeriod)
		assert.Equal(t, "replica-a", m.Replica)
		assert.False(t, m.Degraded)
		assert.Zero(t, m.Episodes)
		assert.Zero(t, (*leveeredis.RateLimiter)(nil).StoreLimiterMetrics())

		_, rs := startFleet(t, 2)
		rs[0].trip(t)
		synctest.Wait()
		require.NoError(t, reg.AddSharedCircuitBreaker(rs[1].sb))
		b, ok := reg.FindSharedCircuitBreaker("payments")
		require.True(t, ok)
		bm := b.StoreBreakerMetrics()
		assert.Equal(t, circuitbreaker.Open, bm.State)
		assert.Equal(t, int64(1), bm.Version)
		assert.Equal(t, rs[0].sb.Origin(), bm.Origin, "the replica that opened it")
		assert.Equal(t, rs[1].sb.Origin(), bm.Replica)
		assert.Equal(t, uint64(1), bm.Adopted)
		assert.Zero(t, bm.Published)
		assert.True(t, bm.StoreAvailable)
		assert.Equal(t, "payments", rs[1].sb.Name())
		assert.Equal(t, "", (*leveeredis.SharedBreaker)(nil).Name())
		assert.Zero(t, (*leveeredis.SharedBreaker)(nil).StoreBreakerMetrics())
	})
}
