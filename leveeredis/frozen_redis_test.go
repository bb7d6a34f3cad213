package leveeredis_test

import (
	"context"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveeredis"
)

// patientOptions are the options of a client that honours the context's deadline but waits
// 30s for a read, a write or a connection: far longer than any bound these tests assert, so
// that only StoreTimeout can end a round trip to a frozen Redis in time.
func patientOptions(addr string) *redis.Options {
	return &redis.Options{
		Addr: addr, MaxRetries: -1, ContextTimeoutEnabled: true, DisableIdentity: true,
		DialTimeout: 30 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second,
		PoolTimeout: 30 * time.Second,
	}
}

// freeze stops s with SIGSTOP: connections are still accepted by the kernel and commands
// written, but nothing is answered. The returned function resumes it (SIGCONT); it runs when
// the test ends too.
func freeze(t *testing.T, s *redisServer) (thaw func()) {
	t.Helper()
	p := s.cmd.Process
	require.NoError(t, p.Signal(syscall.SIGSTOP))
	thaw = func() { _ = p.Signal(syscall.SIGCONT) }
	t.Cleanup(thaw)
	return thaw
}

// A bound generous for a machine loaded by -race and other builds, and far below the client's
// 30s timeouts (and go-redis's 5s default ReadTimeout).
const frozenBound = 5 * time.Second

// NewSharedBreaker on a frozen Redis returns within its store timeout's reach, not the
// client's ReadTimeout: the breaker works from its local breaker, the failed subscription is
// counted, and it is made in the background once Redis answers again.
func TestRedisSharedBreakerNewOnFrozenRedis(t *testing.T) {
	s := startRedis(t)
	c := redis.NewClient(patientOptions(s.addr()))
	defer func() { _ = c.Close() }()
	require.NoError(t, c.Ping(context.Background()).Err()) // an idle connection in the pool
	thaw := freeze(t, s)

	b, err := circuitbreaker.New("payments", fleetConfig())
	require.NoError(t, err)
	r := &replica{client: c, cb: b}
	start := time.Now()
	r.sb, err = leveeredis.NewSharedBreaker(b, c, leveeredis.BreakerConfig{StoreTimeout: 100 * time.Millisecond, RetryInterval: 100 * time.Millisecond})
	took := time.Since(start)
	require.NoError(t, err)
	defer func() { require.NoError(t, r.sb.Close()) }()
	require.Less(t, took, frozenBound)

	// The record's read and the subscription both failed; the retries go on failing.
	eventually(t, func() bool { return r.sb.StoreMetrics().StoreErrors >= 3 }, "the failed round trips are counted")
	require.False(t, r.sb.StoreMetrics().StoreAvailable)
	start = time.Now()
	r.trip(t) // CLOSED and OPEN decide locally: no round trip
	require.ErrorIs(t, r.call(nil), circuitbreaker.ErrCallNotPermitted)
	require.Less(t, time.Since(start), frozenBound)

	thaw()
	subscribed(t, s, 1)
	eventually(t, func() bool { return r.sb.StoreMetrics().StoreAvailable && r.sb.Version() == 1 }, "the local OPEN is written")
	require.Equal(t, circuitbreaker.Open, b.State())
	require.Equal(t, "1", c.HGet(context.Background(), "levee:cb:{payments}", "state").Val())
}

// Close of a breaker that never reached a frozen Redis returns within the same bound and
// leaves no goroutine behind.
func TestRedisSharedBreakerCloseOnFrozenRedis(t *testing.T) {
	s := startRedis(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	c := redis.NewClient(patientOptions(s.addr()))
	defer func() { _ = c.Close() }()
	freeze(t, s)

	b, err := circuitbreaker.New("payments", fleetConfig())
	require.NoError(t, err)
	start := time.Now()
	sb, err := leveeredis.NewSharedBreaker(b, c, leveeredis.BreakerConfig{StoreTimeout: 100 * time.Millisecond, RetryInterval: 50 * time.Millisecond})
	require.NoError(t, err)
	eventually(t, func() bool { return sb.StoreMetrics().StoreErrors >= 2 }, "the subscription failed")
	require.NoError(t, sb.Close())
	require.Less(t, time.Since(start), frozenBound)
}

// Warm on a frozen Redis fails with the timeout after StoreTimeout, not the client's
// ReadTimeout.
func TestRedisWarmOnFrozenRedis(t *testing.T) {
	s := startRedis(t)
	c := redis.NewClient(patientOptions(s.addr()))
	defer func() { _ = c.Close() }()
	rl, err := leveeredis.NewRateLimiter(c, "warm", leveeredis.Config{LimitForPeriod: 10, StoreTimeout: 100 * time.Millisecond})
	require.NoError(t, err)
	defer func() { _ = rl.Close() }()
	require.NoError(t, rl.Warm(context.Background()))
	freeze(t, s)

	start := time.Now()
	err = rl.Warm(context.Background())
	took := time.Since(start)
	require.Less(t, took, frozenBound)
	require.GreaterOrEqual(t, took, 100*time.Millisecond, "the first round trip waited its StoreTimeout")
	var ne net.Error
	require.ErrorAs(t, err, &ne) // the read's deadline, StoreTimeout's
	require.True(t, ne.Timeout(), "%v", err)
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	require.ErrorContains(t, err, `leveeredis: load scripts of "warm": `)
}
