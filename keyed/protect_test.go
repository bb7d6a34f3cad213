package keyed_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/keyed"
)

func breakers(t *testing.T, cfg keyed.Config) (*keyed.Keyed[string, *circuitbreaker.CircuitBreaker], *[]string) {
	t.Helper()
	k, err := keyed.New(cfg, func(host string) (*circuitbreaker.CircuitBreaker, error) {
		return circuitbreaker.New(host, circuitbreaker.Config{})
	})
	require.NoError(t, err)
	var log []string
	k.Subscribe(func(e keyed.Eviction[string, *circuitbreaker.CircuitBreaker]) {
		log = append(log, e.Key+" "+e.Cause.String())
	})
	return k, &log
}

func get[V any](t *testing.T, k *keyed.Keyed[string, V], key string) V {
	t.Helper()
	v, err := k.Get(key)
	require.NoError(t, err)
	return v
}

// An OPEN or HALF_OPEN breaker is never evicted for capacity: the least recently used key
// that is not protected goes instead; when every key is protected, the new key is refused.
func TestProtectedBreakersAreNotEvictedForCapacity(t *testing.T) {
	k, log := breakers(t, keyed.Config{MaxKeys: 2, IdleTimeout: keyed.NoIdleTimeout})
	a := get(t, k, "a")
	require.NoError(t, a.TransitionToOpenState())
	get(t, k, "b")
	get(t, k, "c") // a is the least recently used, but OPEN: b goes
	assert.Equal(t, []string{"b CAPACITY"}, *log)
	c := get(t, k, "c")
	require.NoError(t, c.TransitionToOpenState())
	require.NoError(t, c.TransitionToHalfOpenState())
	_, err := k.Get("d")
	require.ErrorIs(t, err, keyed.ErrAllKeysProtected)
	assert.EqualError(t, err, "keyed: all 2 keys are protected (an OPEN or HALF_OPEN breaker, a limiter with waiters): no new key can be created")
	var pe *keyed.AllKeysProtectedError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 2, pe.MaxKeys)
	assert.True(t, levee.IsRejection(err))
	assert.Equal(t, keyed.Metrics{Keys: 2, Hits: 1, Misses: 3, Created: 3, EvictedCapacity: 1, RefusedProtected: 1}, k.Metrics())
	assert.Same(t, a, get(t, k, "a"), "the OPEN breaker kept its state")
	require.NoError(t, a.TransitionToClosedState())
	get(t, k, "d") // c is HALF_OPEN; a, CLOSED again, goes
	assert.Equal(t, []string{"b CAPACITY", "a CAPACITY"}, *log)
}

// An OPEN breaker idle for IdleTimeout stays, its idle time starting again; once CLOSED it
// goes at the next access after IdleTimeout.
func TestProtectedBreakersAreNotEvictedWhenIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k, log := breakers(t, keyed.Config{MaxKeys: 10, IdleTimeout: time.Minute})
		a := get(t, k, "a")
		get(t, k, "b")
		require.NoError(t, a.TransitionToForcedOpenState())
		time.Sleep(time.Minute)
		assert.Equal(t, 1, k.EvictIdle())
		assert.Equal(t, []string{"b IDLE"}, *log)
		require.NoError(t, a.TransitionToClosedState())
		time.Sleep(59 * time.Second)
		assert.Zero(t, k.EvictIdle(), "a's idle time started again at the last walk")
		time.Sleep(time.Second)
		assert.Equal(t, 1, k.EvictIdle())
		assert.Equal(t, []string{"b IDLE", "a IDLE"}, *log)
	})
}

// A limiter with callers waiting in its queue is protected; one without is not.
func TestLimiterWithWaitersIsNotEvicted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k, err := keyed.New(keyed.Config{MaxKeys: 1, IdleTimeout: keyed.NoIdleTimeout}, func(tenant string) (*adaptive.Limiter, error) {
			return adaptive.New(tenant, adaptive.Config{InitialLimit: 1, MinLimit: 1, MaxLimit: 1, MaxQueued: 1, MaxWaitDuration: time.Hour})
		})
		require.NoError(t, err)
		l := get(t, k, "acme")
		held, err := l.Acquire(context.Background())
		require.NoError(t, err)
		done := make(chan error)
		go func() {
			p, err := l.Acquire(context.Background())
			p.OnIgnore()
			done <- err
		}()
		synctest.Wait()
		_, err = k.Get("globex")
		assert.ErrorIs(t, err, keyed.ErrAllKeysProtected, "acme has a waiter")
		held.OnIgnore()
		require.NoError(t, <-done)
		other := get(t, k, "globex")
		assert.NotSame(t, l, other)
		assert.Equal(t, 1, k.Metrics().Keys)
	})
}

type guard struct{ on bool }

func (g *guard) Protecting() bool { return g.on }

// Any instance can say it protects its key by implementing Protecting.
func TestProtectingInterface(t *testing.T) {
	n := 0
	k, err := keyed.New(keyed.Config{MaxKeys: 1, IdleTimeout: keyed.NoIdleTimeout}, func(key string) (*guard, error) {
		n++
		return &guard{}, nil
	})
	require.NoError(t, err)
	g := get(t, k, "a")
	g.on = true
	_, err = k.Get("b")
	assert.ErrorIs(t, err, keyed.ErrAllKeysProtected)
	g.on = false
	get(t, k, "b")
	assert.Equal(t, 2, n)
	assert.True(t, k.Remove("b"), "Remove is explicit: it removes a protected key too")
}

func ExampleAllKeysProtectedError() {
	k, _ := keyed.New(keyed.Config{MaxKeys: 1}, func(host string) (*circuitbreaker.CircuitBreaker, error) {
		return circuitbreaker.New(host, circuitbreaker.Config{})
	})
	cb, _ := k.Get("a.example")
	_ = cb.TransitionToOpenState()
	_, err := k.Get("b.example")
	fmt.Println(err)
	// Output:
	// keyed: all 1 keys are protected (an OPEN or HALF_OPEN breaker, a limiter with waiters): no new key can be created
}
