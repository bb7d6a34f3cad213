package leveeredis_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveeredis"
)

// redisFleet starts n replicas with a 100ms StoreTimeout (a loaded test machine misses 20ms
// now and then) and the given RetryInterval.
func redisFleet(t *testing.T, s *redisServer, n int, retry time.Duration) []*replica {
	rs := make([]*replica, n)
	for i := range rs {
		rs[i] = newReplica(t, s.client(), fleetConfig(),
			leveeredis.BreakerConfig{StoreTimeout: 100 * time.Millisecond, RetryInterval: retry})
		t.Cleanup(func() { rs[i].close(t) })
	}
	return rs
}

// eventually waits up to 5s of real time for cond.
func eventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, cond, 5*time.Second, time.Millisecond, msg)
}

// subscribed waits until n clients subscribe to the breaker's channel.
func subscribed(t *testing.T, s *redisServer, n int64) {
	t.Helper()
	c := s.client()
	defer c.Close()
	eventually(t, func() bool {
		m, err := c.PubSubNumSub(context.Background(), "levee:cb:{payments}:transitions").Result()
		return err == nil && m["levee:cb:{payments}:transitions"] == n
	}, "subscriptions")
}

func TestRedisSharedBreakerOpenReachesFleet(t *testing.T) {
	s := startRedis(t)
	rs := redisFleet(t, s, 3, 10*time.Second) // a poller would take up to 10s
	subscribed(t, s, 3)

	var openedAt [3]atomic.Int64
	for i, r := range rs[1:] {
		r.cb.OnStateChange(func(_, to circuitbreaker.State) {
			if to == circuitbreaker.Open {
				openedAt[i+1].Store(time.Now().UnixNano())
			}
		})
	}
	rs[0].trip(t)
	tripped := time.Now()
	eventually(t, func() bool { return openedAt[1].Load() != 0 && openedAt[2].Load() != 0 }, "B and C open")
	for i, r := range rs[1:] {
		require.Equal(t, circuitbreaker.Open, r.cb.State())
		require.Equal(t, int64(1), r.sb.Version())
		// One compare-and-swap and its publish over loopback: far below a poller's interval.
		d := time.Duration(openedAt[i+1].Load() - tripped.UnixNano())
		require.Less(t, d, time.Second, "replica %d opened %v after A", i+1, d)
		require.InDelta(t, float64(10*time.Second), float64(r.cb.RemainingWaitInOpenState()), float64(time.Second))
	}
	// A counts its publish once the script has answered, which may be after B and C got it.
	eventually(t, func() bool { return rs[0].sb.StoreMetrics().Published == 1 }, "A counted its publish")
	require.Equal(t, uint64(1), rs[0].sb.StoreMetrics().Published)
}

// CLIENT PAUSE stalls Redis: A's write times out after StoreTimeout while its callers are not
// delayed; A stays OPEN locally, and the fleet converges when Redis answers again.
func TestRedisSharedBreakerClientPause(t *testing.T) {
	s := startRedis(t)
	rs := redisFleet(t, s, 2, 50*time.Millisecond)
	subscribed(t, s, 2)
	admin := redis.NewClient(&redis.Options{Addr: s.addr(), DisableIdentity: true})
	defer admin.Close()

	require.NoError(t, admin.Do(context.Background(), "CLIENT", "PAUSE", "1000", "ALL").Err())
	start := time.Now()
	rs[0].trip(t)
	require.Less(t, time.Since(start), 500*time.Millisecond, "the callers do not wait for the 1s pause")
	eventually(t, func() bool { return !rs[0].sb.StoreMetrics().StoreAvailable }, "A saw the store fail")
	require.Equal(t, circuitbreaker.Open, rs[0].cb.State())
	require.Equal(t, circuitbreaker.Closed, rs[1].cb.State())
	require.ErrorIs(t, rs[0].call(nil), circuitbreaker.ErrCallNotPermitted)

	eventually(t, func() bool { return rs[1].cb.State() == circuitbreaker.Open }, "B opens after the pause")
	eventually(t, func() bool { return rs[0].sb.Version() == 1 }, "A saw its record (or its own write done late)")
	// A's store is available again once one of its own operations succeeds after the pause,
	// which may come a moment after the record it saw.
	eventually(t, func() bool { return rs[0].sb.StoreMetrics().StoreAvailable }, "A sees the store again")
	require.Equal(t, int64(1), rs[1].sb.Version())
	require.Equal(t, "1", admin.HGet(context.Background(), "levee:cb:{payments}", "state").Val())
	require.Equal(t, rs[0].sb.Origin(), admin.HGet(context.Background(), "levee:cb:{payments}", "origin").Val())
	require.Equal(t, 1, countLines(rs[0].log.String(), "circuit breaker store unavailable"), rs[0].log.String())
}

// Redis killed mid-run: every breaker keeps deciding locally; after a restart (its data lost)
// the local OPEN is written again and reaches the other replica.
func TestRedisSharedBreakerKilledAndRestarted(t *testing.T) {
	s := startRedis(t)
	rs := redisFleet(t, s, 2, 50*time.Millisecond)
	subscribed(t, s, 2)

	// A first opening and its close, shared while Redis is up: both replicas at version 2.
	rs[0].trip(t)
	eventually(t, func() bool { return rs[1].cb.State() == circuitbreaker.Open }, "B opens")
	require.NoError(t, rs[0].cb.TransitionToClosedState())
	eventually(t, func() bool { return rs[1].cb.State() == circuitbreaker.Closed }, "B closes")
	require.Equal(t, int64(2), rs[1].sb.Version())

	before := len(rs[0].log.String())
	s.kill()
	rs[0].trip(t)
	eventually(t, func() bool { return !rs[0].sb.StoreMetrics().StoreAvailable }, "A saw the store fail")
	for range 20 { // B works alone: CLOSED, every call permitted and recorded
		require.NoError(t, rs[1].call(nil))
	}
	require.Equal(t, circuitbreaker.Closed, rs[1].cb.State())
	require.Equal(t, 4, rs[1].cb.Metrics().NumberOfBufferedCalls)
	require.Equal(t, 0, rs[1].cb.Metrics().NumberOfFailedCalls)

	s.start()
	eventually(t, func() bool { return rs[1].cb.State() == circuitbreaker.Open }, "B adopts A's OPEN after the restart")
	eventually(t, func() bool { return rs[0].sb.Version() == 3 }, "versions keep growing after the loss")
	require.Equal(t, int64(3), rs[1].sb.Version())
	require.True(t, rs[0].sb.StoreMetrics().StoreAvailable)
	episode := rs[0].log.String()[before:] // one record when it failed, one when it came back
	require.Equal(t, 1, countLines(episode, "circuit breaker store unavailable"), episode)
	require.Equal(t, 1, countLines(episode, "circuit breaker store available again"), episode)
}
