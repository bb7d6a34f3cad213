package leveeredis

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// A check id is counted once: the same check run again (an answer lost, the check retried) is
// answered with its grant and takes nothing more; a grant whose answer never arrived is given
// back by reclaim within its cycle, and an unknown id gives nothing back.
func TestCheckIDCountedOnceAndReclaimed(t *testing.T) {
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true, DisableIdentity: true})
	defer func() { _ = c.Close() }()
	period := 24 * time.Hour
	if period-time.Duration(time.Now().UnixNano())%period < time.Minute {
		period = 25 * time.Hour
	}
	rl, err := NewRateLimiter(c, "idem", Config{LimitForPeriod: 5, LimitRefreshPeriod: period, FallbackLimitForPeriod: 1, StoreTimeout: time.Second})
	require.NoError(t, err)
	defer func() { _ = rl.Close() }()
	ctx := context.Background()
	run := func(id string) []int64 {
		vals, err := rl.script.Run(ctx, c, rl.keys, 1, rl.periodUs, 5, 0, 0, id, rl.cfg.ReplicaID, 0, 0, 0).Int64Slice()
		require.NoError(t, err)
		return vals
	}
	first := run("r#1")
	require.Equal(t, []int64{1, 0, 4, 5, 1}, first[:5])
	again := run("r#1")
	require.Equal(t, []int64{1, 0, 4, 5, 1}, again[:5], "the same check is not counted twice")

	rl.addLost("r#1")
	rl.addLost("never-granted")
	rl.reclaim()
	require.Equal(t, uint64(1), rl.Metrics().Reclaimed)
	require.Equal(t, []int64{1, 0, 4, 5, 2}, run("r#2")[:5], "the reclaimed permission is free again")
	rl.addLost("r#1") // already given back
	rl.reclaim()
	require.Equal(t, uint64(1), rl.Metrics().Reclaimed)
}

// A debt reported for the cycle before Redis's (the replica's estimate of Redis's clock behind
// a boundary) counts in Redis's cycle, less a share per cycle since: 5 granted from the
// previous cycle on with a share of 3 leave 2 in the current one.
func TestDebtOfThePreviousCycleCarried(t *testing.T) {
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true, DisableIdentity: true})
	defer func() { _ = c.Close() }()
	period := 24 * time.Hour
	if period-time.Duration(time.Now().UnixNano())%period < time.Minute {
		period = 25 * time.Hour
	}
	rl, err := NewRateLimiter(c, "carry", Config{LimitForPeriod: 10, LimitRefreshPeriod: period, FallbackLimitForPeriod: 3, StoreTimeout: time.Second})
	require.NoError(t, err)
	defer func() { _ = rl.Close() }()
	cur := time.Now().UnixMicro() / rl.periodUs
	vals, err := rl.script.Run(context.Background(), c, rl.keys, 1, rl.periodUs, 10, 0, 0, "r#1", rl.cfg.ReplicaID, 0, cur-1, 5, 3).Int64Slice()
	require.NoError(t, err)
	require.Equal(t, []int64{1, 0, 10 - 2 - 1}, vals[:3])
	vals, err = rl.script.Run(context.Background(), c, rl.keys, 1, rl.periodUs, 10, 0, 0, "r#2", rl.cfg.ReplicaID, 0, cur, 2, 3).Int64Slice()
	require.NoError(t, err)
	require.Equal(t, []int64{1, 0, 10 - 2 - 2}, vals[:3], "the carried debt is taken once")
}

// A reclaim that fails keeps its ids for the next one: the permission Redis counted is given
// back once Redis answers again.
func TestReclaimFailureKeepsTheIDs(t *testing.T) {
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true, DisableIdentity: true})
	defer func() { _ = c.Close() }()
	period := 24 * time.Hour
	if period-time.Duration(time.Now().UnixNano())%period < time.Minute {
		period = 25 * time.Hour
	}
	rl, err := NewRateLimiter(c, "requeue", Config{LimitForPeriod: 5, LimitRefreshPeriod: period, FallbackLimitForPeriod: 1, StoreTimeout: time.Second})
	require.NoError(t, err)
	defer func() { _ = rl.Close() }()
	vals, err := rl.script.Run(context.Background(), c, rl.keys, 1, rl.periodUs, 5, 0, 0, "r#1", rl.cfg.ReplicaID, 0, 0, 0).Int64Slice()
	require.NoError(t, err)
	require.Equal(t, []int64{1, 0, 4, 5, 1}, vals[:5])

	rl.addLost("r#1")
	m.SetError("LOADING Redis is loading the dataset in memory")
	rl.reclaim()
	require.Equal(t, uint64(0), rl.Metrics().Reclaimed)
	m.SetError("")
	rl.reclaim()
	require.Equal(t, uint64(1), rl.Metrics().Reclaimed, "the id waited for Redis to answer again")
	rl.reclaim()
	require.Equal(t, uint64(1), rl.Metrics().Reclaimed)
}
