package leveeredis_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveeredis"
)

var errBoom = errors.New("boom")

// fleetConfig opens after 4 calls at 50% failures, waits 10s and lets 2 probes through.
func fleetConfig() circuitbreaker.Config {
	return circuitbreaker.Config{
		SlidingWindowSize:                     4,
		MinimumNumberOfCalls:                  4,
		WaitDurationInOpenState:               10 * time.Second,
		PermittedNumberOfCallsInHalfOpenState: 2,
	}
}

// replica is one process of the fleet: its own client, local breaker and SharedBreaker.
type replica struct {
	client *redis.Client
	cb     *circuitbreaker.CircuitBreaker
	sb     *leveeredis.SharedBreaker
	log    *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fastFail are the client options that make a store failure cost at most the store timeout.
func fastFail(o *redis.Options) *redis.Options {
	o.MaxRetries = -1
	o.ContextTimeoutEnabled = true
	o.DialTimeout = 50 * time.Millisecond
	o.ReadTimeout = 50 * time.Millisecond
	o.WriteTimeout = 50 * time.Millisecond
	o.PoolTimeout = 60 * time.Millisecond
	o.DisableIdentity = true
	return o
}

func miniClient(m *miniredis.Miniredis) *redis.Client {
	return redis.NewClient(fastFail(&redis.Options{
		Addr:   "127.0.0.1:6379", // never dialed: Dialer connects to m in memory
		Dialer: func(context.Context, string, string) (net.Conn, error) { return m.Dial() },
	}))
}

func newReplica(t *testing.T, client *redis.Client, cfg circuitbreaker.Config, scfg leveeredis.BreakerConfig) *replica {
	t.Helper()
	b, err := circuitbreaker.New("payments", cfg)
	require.NoError(t, err)
	r := &replica{client: client, cb: b, log: &syncBuffer{}}
	if scfg.Logger == nil {
		scfg.Logger = slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			}}))
	}
	r.sb, err = leveeredis.NewSharedBreaker(b, client, scfg)
	require.NoError(t, err)
	return r
}

func (r *replica) close(t *testing.T) {
	require.NoError(t, r.sb.Close())
	require.NoError(t, r.client.Close())
}

func (r *replica) call(err error) error {
	_, e := leveeredis.Execute(context.Background(), r.sb, func(context.Context) (int, error) { return 1, err })
	return e
}

// trip fails 4 calls in r, which opens its breaker.
func (r *replica) trip(t *testing.T) {
	t.Helper()
	for range 4 {
		require.ErrorIs(t, r.call(errBoom), errBoom)
	}
	require.Equal(t, circuitbreaker.Open, r.cb.State())
}

// fleet starts n replicas on m, each with its own client.
func fleet(t *testing.T, m *miniredis.Miniredis, n int) []*replica {
	rs := make([]*replica, n)
	for i := range rs {
		rs[i] = newReplica(t, miniClient(m), fleetConfig(), leveeredis.BreakerConfig{})
	}
	return rs
}

// startFleet is the set-up of the breaker tests in a synctest bubble: a miniredis and n
// replicas on it, subscribed (synctest.Wait), all closed when the test ends.
func startFleet(t *testing.T, n int) (*miniredis.Miniredis, []*replica) {
	t.Helper()
	m := miniredis.NewMiniRedis()
	t.Cleanup(m.Close)
	rs := fleet(t, m, n)
	t.Cleanup(func() { closeAll(t, rs) })
	synctest.Wait()
	return m, rs
}

func closeAll(t *testing.T, rs []*replica) {
	for _, r := range rs {
		r.close(t)
	}
}

func hget(t *testing.T, m *miniredis.Miniredis, field string) string {
	t.Helper()
	return m.HGet("levee:cb:{payments}", field)
}

func countLines(s, substr string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			n++
		}
	}
	return n
}
