package keyed_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
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

// breakerPatterns builds a breaker named after its key, recording the keys built.
func breakerPatterns(built *[]string) func(string) (levee.Patterns, error) {
	var mu sync.Mutex
	return func(key string) (levee.Patterns, error) {
		mu.Lock()
		*built = append(*built, key)
		mu.Unlock()
		if key == "bad" {
			return levee.Patterns{}, errors.New("no patterns for bad")
		}
		cb, err := circuitbreaker.New(key, circuitbreaker.Config{})
		return levee.Patterns{CircuitBreaker: cb}, err
	}
}

// named is what the use function of the tests makes of a key's patterns.
type named struct {
	key string
	cb  *circuitbreaker.CircuitBreaker
}

func useNamed(key string, ps levee.Patterns) (*named, error) {
	if key == "unusable" {
		return nil, errors.New("cannot use unusable")
	}
	return &named{key: key, cb: ps.CircuitBreaker}, nil
}

func TestNewPipelinesRefusesInvalidArguments(t *testing.T) {
	var built []string
	_, err := keyed.NewPipelines[string, *named](keyed.Config{}, nil, useNamed)
	assert.EqualError(t, err, "keyed: build must be a non-nil function, got nil")
	_, err = keyed.NewPipelines[string, *named](keyed.Config{}, breakerPatterns(&built), nil)
	assert.EqualError(t, err, "keyed: use must be a non-nil function, got nil")
	_, err = keyed.NewPipelines(keyed.Config{MaxKeys: -1}, breakerPatterns(&built), useNamed)
	assert.EqualError(t, err, "keyed: MaxKeys must be in [1, 1073741824], got -1")
	p, err := keyed.NewPipelines(keyed.Config{MaxKeys: 5}, breakerPatterns(&built), useNamed)
	require.NoError(t, err)
	assert.Equal(t, keyed.Config{MaxKeys: 5, IdleTimeout: keyed.DefaultIdleTimeout}, p.Config())
	assert.Empty(t, built, "nothing is built before a key is asked for")
}

// Each key's patterns are built once and used once; Get, Patterns and All see the same
// instances; a failed build or use refuses that Get and is tried again on the next.
func TestPipelinesBuildEachKeyOnce(t *testing.T) {
	var built []string
	p, err := keyed.NewPipelines(keyed.Config{MaxKeys: 5}, breakerPatterns(&built), useNamed)
	require.NoError(t, err)
	a, err := p.Get("a")
	require.NoError(t, err)
	assert.Equal(t, "a", a.key)
	assert.Equal(t, "a", a.cb.Name())
	again, err := p.Get("a")
	require.NoError(t, err)
	assert.Same(t, a, again)
	ps, err := p.Patterns("a")
	require.NoError(t, err)
	assert.Same(t, a.cb, ps.CircuitBreaker)
	ps, err = p.Patterns("b") // builds b, as its first Get would
	require.NoError(t, err)
	assert.Equal(t, "b", ps.CircuitBreaker.Name())

	for range 2 {
		v, err := p.Get("bad")
		assert.EqualError(t, err, "no patterns for bad")
		assert.Nil(t, v)
		_, err = p.Patterns("unusable")
		assert.EqualError(t, err, "cannot use unusable")
	}
	assert.Equal(t, []string{"a", "b", "bad", "unusable", "bad", "unusable"}, built)

	var keys []string
	for k, ps := range p.All() {
		keys = append(keys, k+"="+ps.CircuitBreaker.Name())
	}
	assert.Equal(t, []string{"b=b", "a=a"}, keys, "most recently used first")
	assert.Equal(t, keyed.Metrics{Keys: 2, Hits: 2, Misses: 6, Created: 2, CreateErrors: 4}, p.Metrics())
}

// A key whose breaker is OPEN, HALF_OPEN or FORCED_OPEN is never evicted: with MaxKeys keys
// held and all protecting, a new key is refused.
func TestPipelinesKeepKeysWhoseBreakerProtects(t *testing.T) {
	for _, open := range []func(*circuitbreaker.CircuitBreaker) error{
		(*circuitbreaker.CircuitBreaker).TransitionToOpenState,
		func(cb *circuitbreaker.CircuitBreaker) error {
			if err := cb.TransitionToOpenState(); err != nil {
				return err
			}
			return cb.TransitionToHalfOpenState()
		},
		(*circuitbreaker.CircuitBreaker).TransitionToForcedOpenState,
	} {
		var built []string
		p, err := keyed.NewPipelines(keyed.Config{MaxKeys: 1, IdleTimeout: keyed.NoIdleTimeout}, breakerPatterns(&built), useNamed)
		require.NoError(t, err)
		a, err := p.Get("a")
		require.NoError(t, err)
		require.NoError(t, open(a.cb))
		_, err = p.Get("b")
		assert.EqualError(t, err, "keyed: all 1 keys are protected (an OPEN or HALF_OPEN breaker, a limiter with waiters): no new key can be created")
		assert.True(t, levee.IsRejection(err))
		require.NoError(t, a.cb.TransitionToClosedState())
		b, err := p.Get("b")
		require.NoError(t, err)
		assert.Equal(t, "b", b.key)
		assert.Equal(t, []string{"a", "b"}, built)
		assert.Equal(t, keyed.Metrics{Keys: 1, Misses: 2, Created: 2, EvictedCapacity: 1, RefusedProtected: 1}, p.Metrics())
	}
}

// A key whose ConcurrencyLimiter is an adaptive limiter with callers waiting is protected too.
func TestPipelinesKeepKeysWhoseLimiterHasWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		limiters := map[string]*adaptive.Limiter{}
		p, err := keyed.NewPipelines(keyed.Config{MaxKeys: 1, IdleTimeout: time.Minute}, func(tenant string) (levee.Patterns, error) {
			l, err := adaptive.New(tenant, adaptive.Config{InitialLimit: 1, MinLimit: 1, MaxLimit: 1, MaxQueued: 1, MaxWaitDuration: time.Hour})
			limiters[tenant] = l
			return levee.Patterns{ConcurrencyLimiter: l}, err
		}, func(_ string, ps levee.Patterns) (levee.Admitter, error) { return ps.ConcurrencyLimiter, nil })
		require.NoError(t, err)
		acme, err := p.Get("acme")
		require.NoError(t, err)
		held, err := acme.Admit(context.Background())
		require.NoError(t, err)
		done := make(chan error)
		go func() {
			p, err := acme.Admit(context.Background())
			if err == nil {
				p.Release()
			}
			done <- err
		}()
		synctest.Wait()
		time.Sleep(2 * time.Minute) // idle, but protecting
		_, err = p.Get("globex")
		assert.ErrorIs(t, err, keyed.ErrAllKeysProtected, "acme has a waiter")
		held.Release()
		require.NoError(t, <-done)
		_, err = p.Get("globex")
		require.NoError(t, err)
		// acme's idle time started again when the walk at 2 minutes found it protecting: it
		// leaves for capacity, not idleness.
		assert.Equal(t, keyed.Metrics{Keys: 1, Misses: 2, Created: 2, EvictedCapacity: 1, RefusedProtected: 1}, p.Metrics())
	})
}

func ExamplePipelines() {
	cfg := circuitbreaker.Config{SlidingWindowSize: 2, MinimumNumberOfCalls: 2}
	hosts, _ := keyed.NewPipelines(keyed.Config{MaxKeys: 100},
		func(host string) (levee.Patterns, error) {
			return levee.NewPatterns(host, levee.Configs{CircuitBreaker: &cfg})
		},
		func(host string, ps levee.Patterns) (*levee.Pipeline[string], error) {
			return levee.DefaultPipeline[string](ps, nil), nil
		})
	send := func(host string) (string, error) {
		pipeline, err := hosts.Get(host)
		if err != nil {
			return "", err
		}
		return pipeline.Execute(context.Background(), func(context.Context) (string, error) {
			if host == "down.example" {
				return "", errors.New("connection refused")
			}
			return "200 OK from " + host, nil
		})
	}
	for _, host := range []string{"down.example", "down.example", "down.example", "up.example"} {
		if answer, err := send(host); err != nil {
			fmt.Println("error:", err)
		} else {
			fmt.Println(answer)
		}
	}
	for host, ps := range hosts.All() {
		fmt.Println(host, ps.CircuitBreaker.State())
	}
	// Output:
	// error: connection refused
	// error: connection refused
	// error: circuitbreaker: CircuitBreaker 'down.example' is OPEN and does not permit further calls
	// 200 OK from up.example
	// up.example CLOSED
	// down.example OPEN
}
