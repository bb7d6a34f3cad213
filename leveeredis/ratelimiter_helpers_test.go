package leveeredis_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync/atomic"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/leveeredis"
)

// tb is what the helpers need of *testing.T and *rapid.T.
type tb interface {
	require.TestingT
	Helper()
	Cleanup(func())
}

// mini is a miniredis reached through in-memory pipes, so that it works inside a synctest
// bubble: its TIME and TTLs follow the bubble's fake clock. down makes every new connection
// fail and closes the open ones, as a Redis that went away.
type mini struct {
	*miniredis.Miniredis
	down atomic.Bool
}

func startMini(t tb) *mini {
	t.Helper()
	m := &mini{Miniredis: miniredis.NewMiniRedis()}
	m.ClockTTL(true)
	t.Cleanup(m.Close)
	return m
}

// setDown takes the server away (true) or brings it back (false).
func (m *mini) setDown(down bool) {
	m.down.Store(down)
	if down {
		m.Close() // drops every open connection; Dial restarts it with its data
	}
}

var errRefused = errors.New("connection refused")

// client returns a go-redis client of m with the settings a limiter needs.
func (m *mini) client(t tb) *redis.Client {
	t.Helper()
	o := limiterOptions("127.0.0.1:1") // never dialled: Dialer answers; an IP needs no DNS lookup
	o.Dialer = func(context.Context, string, string) (net.Conn, error) {
		if m.down.Load() {
			return nil, errRefused
		}
		return m.Dial()
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func newShared(t tb, c redis.UniversalClient, name string, cfg leveeredis.Config) *leveeredis.RateLimiter {
	t.Helper()
	rl, err := leveeredis.NewRateLimiter(c, name, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = rl.Close() })
	return rl
}

// startShared is the set-up of a replica in the limiter's tests: a miniredis and one shared
// limiter on it, both closed when the test ends.
func startShared(t tb, name string, cfg leveeredis.Config) (*mini, *leveeredis.RateLimiter) {
	t.Helper()
	m := startMini(t)
	return m, newShared(t, m.client(t), name, cfg)
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func hgetall(t tb, m *mini, key string) map[string]string {
	t.Helper()
	out := map[string]string{}
	fields, err := m.HKeys(key)
	require.NoError(t, err)
	for _, f := range fields {
		out[f] = m.HGet(key, f)
	}
	return out
}
