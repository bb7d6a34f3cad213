package leveeredis_test

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveeredis"
)

// freezable connects to m, or, while frozen, to a peer that never reads nor answers (a
// frozen Redis whose kernel still accepts connections).
type freezable struct {
	m      *miniredis.Miniredis
	frozen atomic.Bool
	mu     sync.Mutex
	peers  []net.Conn
}

func (f *freezable) dial(context.Context, string, string) (net.Conn, error) {
	if !f.frozen.Load() {
		return f.m.Dial()
	}
	conn, peer := net.Pipe()
	f.mu.Lock()
	f.peers = append(f.peers, peer)
	f.mu.Unlock()
	return conn, nil
}

func (f *freezable) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.peers {
		_ = p.Close()
	}
}

// On a frozen store NewSharedBreaker waits one StoreTimeout (the record's read), and the
// subscription, made by the breaker's goroutine, fails after another; both count as store
// errors, and the subscription and the read are tried again every RetryInterval until the
// store answers, when the breaker subscribes and adopts what the fleet published.
func TestSharedBreakerSubscribesOnceTheStoreAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := miniredis.NewMiniRedis()
		t.Cleanup(m.Close)
		f := &freezable{m: m}
		t.Cleanup(f.close)
		f.frozen.Store(true)
		c := redis.NewClient(fastFail(&redis.Options{Addr: "127.0.0.1:6379", Dialer: f.dial}))

		start := time.Now()
		a := newReplica(t, c, fleetConfig(), leveeredis.BreakerConfig{}) // StoreTimeout 20ms, RetryInterval 1s
		t.Cleanup(func() { a.close(t) })
		require.Equal(t, 20*time.Millisecond, time.Since(start), "New waited for the record's read only")
		synctest.Wait()
		require.Equal(t, uint64(1), a.sb.StoreMetrics().StoreErrors, "the subscription is under way")
		time.Sleep(20 * time.Millisecond)
		synctest.Wait()
		require.Equal(t, leveeredis.BreakerStoreMetrics{StoreErrors: 2}, a.sb.StoreMetrics(), "the subscription failed")

		time.Sleep(time.Second + 40*time.Millisecond) // a subscription and a read, 20ms each
		synctest.Wait()
		require.Equal(t, leveeredis.BreakerStoreMetrics{StoreErrors: 4}, a.sb.StoreMetrics())
		require.Equal(t, 1, countLines(a.log.String(), "circuit breaker store unavailable"), a.log.String())

		f.frozen.Store(false)
		b := newReplica(t, miniClient(m), fleetConfig(), leveeredis.BreakerConfig{})
		t.Cleanup(func() { b.close(t) })
		b.trip(t)
		synctest.Wait()
		require.Equal(t, circuitbreaker.Closed, a.cb.State(), "not subscribed yet")

		time.Sleep(time.Until(start.Add(2080 * time.Millisecond))) // the next retry
		synctest.Wait()
		require.Equal(t, circuitbreaker.Open, a.cb.State(), "the subscription's confirmation read B's OPEN")
		require.Equal(t, leveeredis.BreakerStoreMetrics{StoreErrors: 4, Adopted: 1, StoreAvailable: true}, a.sb.StoreMetrics())
		require.Equal(t, 1, countLines(a.log.String(), "circuit breaker store available again"), a.log.String())

		require.NoError(t, b.cb.TransitionToClosedState())
		synctest.Wait()
		require.Equal(t, circuitbreaker.Closed, a.cb.State(), "subscribed: B's CLOSED is received at once")
		require.Equal(t, int64(2), a.sb.Version())
	})
}
