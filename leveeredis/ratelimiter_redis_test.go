package leveeredis_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/leveeredis"
	"github.com/levee-go/levee/ratelimiter"
)

// These tests run a real redis-server (see redisServer). They use real time: the server's
// clock is the wall clock.

// longCycle returns a period so long that the test runs within one cycle: a day, or 25 hours
// when the day's cycle (aligned on the Unix epoch) ends within the minute.
func longCycle(t *testing.T) time.Duration {
	t.Helper()
	for _, period := range []time.Duration{24 * time.Hour, 25 * time.Hour} {
		if period-time.Duration(time.Now().UnixNano())%period >= time.Minute {
			return period
		}
	}
	t.Fatal("no cycle of 24 or 25 hours has a minute left") // the two boundaries are hours apart
	return 0
}

// hammer runs checks from 8 goroutines until stop is closed, and reports the slowest check.
func hammer(rl *leveeredis.RateLimiter, stop <-chan struct{}) (slowest func() time.Duration) {
	var worst atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			pace := time.NewTicker(time.Millisecond) // a check a millisecond per goroutine
			defer pace.Stop()
			for {
				select {
				case <-stop:
					return
				case <-pace.C:
				}
				start := time.Now()
				_ = rl.AcquirePermission(context.Background(), 1)
				d := int64(time.Since(start))
				for w := worst.Load(); d > w && !worst.CompareAndSwap(w, d); w = worst.Load() {
				}
			}
		})
	}
	return func() time.Duration { wg.Wait(); return time.Duration(worst.Load()) }
}

// consumed returns the permissions taken in Redis in the current cycle.
func consumed(t *testing.T, c *redis.Client, name string, limit int) int {
	p, err := c.HGet(context.Background(), "levee:rl:{"+name+"}", "p").Int()
	require.NoError(t, err)
	return limit - p
}

// A stalled Redis (CLIENT PAUSE, DEBUG SLEEP): checks return within StoreTimeout and fall back
// to the local share; the checks that timed out here and ran in Redis after their deadline took
// nothing, so Redis never counts more permissions than callers were granted plus the checks
// that failed (one answered just too late), and never admits more than it counted.
func TestRedisStallNeverOverAdmits(t *testing.T) {
	s := startRedis(t)
	for _, stall := range []struct {
		name string
		do   func(admin *redis.Client) error
	}{
		{"CLIENT PAUSE", func(admin *redis.Client) error {
			return admin.Do(context.Background(), "CLIENT", "PAUSE", "1000", "ALL").Err()
		}},
		{"DEBUG SLEEP", func(admin *redis.Client) error {
			return admin.Do(context.Background(), "DEBUG", "SLEEP", "1").Err()
		}},
	} {
		t.Run(stall.name, func(t *testing.T) {
			const limit, share = 1_000_000, 5
			name := fmt.Sprint("stall", time.Now().UnixNano())
			// A StoreTimeout a loaded machine's live Redis answers within, so that only the
			// stall, five times longer, makes checks fail; client timeouts of two of them.
			const storeTimeout = 200 * time.Millisecond
			client := redis.NewClient(&redis.Options{Addr: s.addr(), MaxRetries: -1, ContextTimeoutEnabled: true,
				DialTimeout: 2 * storeTimeout, ReadTimeout: 2 * storeTimeout, WriteTimeout: 2 * storeTimeout, PoolTimeout: 2 * storeTimeout})
			t.Cleanup(func() { _ = client.Close() }) // after the limiter's Close, registered later
			rl := newShared(t, client, name, leveeredis.Config{
				LimitForPeriod: limit, LimitRefreshPeriod: longCycle(t), TimeoutDuration: ratelimiter.NoWait,
				FallbackLimitForPeriod: share, StoreTimeout: storeTimeout,
			})
			admin := redis.NewClient(&redis.Options{Addr: s.addr(), MaxRetries: -1})
			defer func() { _ = admin.Close() }()
			stop := make(chan struct{})
			slowest := hammer(rl, stop)
			require.Eventually(t, func() bool { return rl.Metrics().Permitted >= 100 }, 20*time.Second, time.Millisecond)
			require.NoError(t, stall.do(admin))
			require.Eventually(t, func() bool { return rl.Metrics().StoreFailures > 0 }, 5*time.Second, time.Millisecond)
			// recovery: the breaker's open wait (1s), then checks reach Redis again
			require.Eventually(t, func() bool { m := rl.Metrics(); return !m.Degraded && m.Permitted > 200 }, 20*time.Second, time.Millisecond)
			p := rl.Metrics().Permitted
			require.Eventually(t, func() bool { return rl.Metrics().Permitted >= p+100 }, 20*time.Second, time.Millisecond)
			close(stop)
			worst := slowest()

			m := rl.Metrics()
			// Never more admitted than Redis counted. A check that timed out while Redis was
			// stalled may still have been counted there when Redis ran it within its deadline
			// but answered too late: a permission lost to the fleet (never an extra admission),
			// at most one per failed check.
			used := consumed(t, admin, name, limit)
			assert.GreaterOrEqual(t, used, int(m.Permitted), "%+v", m)
			assert.LessOrEqual(t, used-int(m.Permitted), int(m.StoreFailures), "%+v", m)
			// The episode starts in the cycle Redis was counting (a 24-hour one): the local
			// share engages only from the next cycle, so it admits nothing here.
			assert.Equal(t, uint64(0), m.LocalPermitted, "%+v", m)
			assert.GreaterOrEqual(t, m.Episodes, uint64(1)) // slow checks under load may open the breaker again
			assert.Equal(t, uint64(0), m.Refused)
			// Each check returns within StoreTimeout, plus what a loaded machine takes to
			// schedule it after its deadline.
			assert.Less(t, worst, storeTimeout+500*time.Millisecond, "slowest check")
		})
	}
}

// A killed Redis: each replica admits its share (from the heartbeat count) and nothing more,
// FailOpen admits everything and FailClosed nothing, every check within StoreTimeout; after a
// restart on the same port the replicas use Redis again.
func TestRedisKilledFailureModes(t *testing.T) {
	s := startRedis(t)
	const limit = 10
	period := longCycle(t)
	// A StoreTimeout and client timeouts a loaded machine's live Redis answers within: a check
	// before the kill must reach Redis, not fall back for a round trip of 20ms.
	const storeTimeout = 500 * time.Millisecond
	cfg := leveeredis.Config{LimitForPeriod: limit, LimitRefreshPeriod: period,
		TimeoutDuration: ratelimiter.NoWait, HeartbeatInterval: 20 * time.Millisecond, StoreTimeout: storeTimeout}
	client := func() *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: s.addr(), MaxRetries: -1, ContextTimeoutEnabled: true,
			DialTimeout: 2 * storeTimeout, ReadTimeout: 2 * storeTimeout, WriteTimeout: 2 * storeTimeout, PoolTimeout: 2 * storeTimeout})
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	a := newShared(t, client(), "killed", cfg)
	b := newShared(t, client(), "killed", cfg)
	cfg.FailureMode = leveeredis.FailOpen
	open := newShared(t, client(), "killed-open", cfg)
	cfg.FailureMode = leveeredis.FailClosed
	closed := newShared(t, client(), "killed-closed", cfg)
	require.Eventually(t, func() bool {
		return a.Metrics().Replicas == 2 && b.Metrics().Replicas == 2
	}, 5*time.Second, time.Millisecond)
	assert.Equal(t, 5, a.Metrics().FallbackLimitForPeriod)
	ctx := context.Background()
	require.NoError(t, a.AcquirePermission(ctx, 1))
	require.NoError(t, closed.AcquirePermission(ctx, 1))

	s.kill()
	check := func(rl *leveeredis.RateLimiter) error {
		start := time.Now()
		err := rl.AcquirePermission(ctx, 1)
		// Within StoreTimeout, plus what a loaded machine takes to schedule the check after it.
		assert.Less(t, time.Since(start), storeTimeout+500*time.Millisecond)
		return err
	}
	// The episode starts in the cycle Redis was counting (a 24-hour one): the local share
	// engages from the next cycle only, so nothing is admitted. The checks before the store
	// breaker opens are refused with a *StoreError: a's window held its success, so its 9th
	// failure opens it (8 refused), b's 10th (9 refused).
	for i, rl := range []*leveeredis.RateLimiter{a, b} {
		admitted := 0
		for range 30 {
			if check(rl) == nil {
				admitted++
			}
		}
		m := rl.Metrics()
		assert.Equal(t, 0, admitted)
		assert.Equal(t, uint64(8+i), m.StoreRefused, "%+v", m)
		assert.Equal(t, uint64(22-i), m.LocalRefused, "%+v", m)
		assert.True(t, m.Degraded)
	}
	for range 30 {
		require.NoError(t, check(open))
		require.ErrorIs(t, check(closed), ratelimiter.ErrRequestNotPermitted)
	}
	assert.Equal(t, uint64(30), open.Metrics().FailOpenPermitted)
	assert.Equal(t, uint64(30), closed.Metrics().FailClosedRefused)

	s.start()
	admin := s.limiterClient(t)
	require.Eventually(t, func() bool { return a.AcquirePermission(ctx, 1) == nil && !a.Metrics().Degraded }, 10*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool { return closed.AcquirePermission(ctx, 1) == nil }, 10*time.Second, 5*time.Millisecond)
	assert.Equal(t, uint64(2), a.Metrics().Permitted)
	assert.Equal(t, 1, consumed(t, admin, "killed", limit)) // the restarted Redis starts empty
	assert.Equal(t, uint64(1), a.Metrics().Episodes)
}

func testingProcs() int { return runtime.GOMAXPROCS(0) }
