package registry_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

func breaker(t *testing.T, name string) *circuitbreaker.CircuitBreaker {
	t.Helper()
	cb, err := circuitbreaker.New(name, circuitbreaker.Config{})
	require.NoError(t, err)
	return cb
}

func TestAddFindListRemove(t *testing.T) {
	reg := registry.New()
	b, a := breaker(t, "b"), breaker(t, "a")
	require.NoError(t, reg.AddCircuitBreaker(b))
	require.NoError(t, reg.AddCircuitBreaker(a))
	require.NoError(t, reg.AddCircuitBreaker(a), "adding the same instance again is a no-op")

	err := reg.AddCircuitBreaker(breaker(t, "a"))
	require.ErrorIs(t, err, registry.ErrDuplicate)
	assert.EqualError(t, err, `registry: name already registered: circuitbreaker "a"`)

	got, ok := reg.FindCircuitBreaker("a")
	assert.True(t, ok)
	assert.Same(t, a, got)
	_, ok = reg.FindCircuitBreaker("c")
	assert.False(t, ok)
	assert.Equal(t, []*circuitbreaker.CircuitBreaker{a, b}, reg.CircuitBreakers())

	removed, ok := reg.RemoveCircuitBreaker("a")
	assert.True(t, ok)
	assert.Same(t, a, removed)
	_, ok = reg.RemoveCircuitBreaker("a")
	assert.False(t, ok)
	assert.Equal(t, []*circuitbreaker.CircuitBreaker{b}, reg.CircuitBreakers())
}

func TestEveryPatternHasItsOwnNamespace(t *testing.T) {
	reg := registry.New()
	cb := breaker(t, "payment")
	rt, err := retry.New("payment", retry.Config{})
	require.NoError(t, err)
	bh, err := bulkhead.New("payment", bulkhead.Config{})
	require.NoError(t, err)
	wp, err := async.NewWorkerPool("payment", async.WorkerPoolConfig{})
	require.NoError(t, err)
	defer wp.Close()
	rl, err := ratelimiter.New("payment", ratelimiter.Config{})
	require.NoError(t, err)
	tl, err := timelimiter.New("payment", timelimiter.Config{})
	require.NoError(t, err)

	require.NoError(t, reg.AddCircuitBreaker(cb))
	require.NoError(t, reg.AddRetry(rt))
	require.NoError(t, reg.AddBulkhead(bh))
	require.NoError(t, reg.AddWorkerPool(wp))
	require.NoError(t, reg.AddRateLimiter(rl))
	require.NoError(t, reg.AddTimeLimiter(tl))

	assert.Equal(t, []*circuitbreaker.CircuitBreaker{cb}, reg.CircuitBreakers())
	assert.Equal(t, []*retry.Retry{rt}, reg.Retries())
	assert.Equal(t, []*bulkhead.Bulkhead{bh}, reg.Bulkheads())
	assert.Equal(t, []*async.WorkerPool{wp}, reg.WorkerPools())
	assert.Equal(t, []*ratelimiter.RateLimiter{rl}, reg.RateLimiters())
	assert.Equal(t, []*timelimiter.TimeLimiter{tl}, reg.TimeLimiters())
	assert.Equal(t, "registry{circuitbreaker: payment; retry: payment; bulkhead: payment; workerpool: payment; ratelimiter: payment; timelimiter: payment}", reg.String())

	gotRt, ok := reg.FindRetry("payment")
	assert.True(t, ok)
	assert.Same(t, rt, gotRt)
	gotTl, ok := reg.FindTimeLimiter("payment")
	assert.True(t, ok)
	assert.Same(t, tl, gotTl)
}

func TestNilInstanceIsRefused(t *testing.T) {
	reg := registry.New()
	assert.EqualError(t, reg.AddCircuitBreaker(nil), "registry: nil instance of circuitbreaker")
	assert.EqualError(t, reg.AddRetry(nil), "registry: nil instance of retry")
	_, _, err := reg.ReplaceRateLimiter(nil)
	assert.EqualError(t, err, "registry: nil instance of ratelimiter")
	assert.Equal(t, "registry{}", reg.String())
}

func TestReplaceAndEvents(t *testing.T) {
	reg := registry.New()
	var got []string
	unsubscribe := reg.Subscribe(func(e registry.Event) {
		// A subscriber may read the registry: the change is already visible.
		_, found := reg.FindCircuitBreaker(e.Name)
		got = append(got, fmt.Sprintf("%s %s %s found=%t replaced=%t", e.Type, e.Pattern, e.Name, found, e.Replaced != nil))
	})
	first, second := breaker(t, "payment"), breaker(t, "payment")
	require.NoError(t, reg.AddCircuitBreaker(first))
	old, ok, err := reg.ReplaceCircuitBreaker(second)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Same(t, first, old)
	_, ok, err = reg.ReplaceCircuitBreaker(second)
	require.NoError(t, err)
	assert.True(t, ok, "replacing an instance by itself reports it, without an event")
	_, ok, err = reg.ReplaceCircuitBreaker(breaker(t, "stock"))
	require.NoError(t, err)
	assert.False(t, ok)
	reg.RemoveCircuitBreaker("payment")
	unsubscribe()
	unsubscribe()
	reg.RemoveCircuitBreaker("stock")

	assert.Equal(t, []string{
		"ADDED circuitbreaker payment found=true replaced=false",
		"REPLACED circuitbreaker payment found=true replaced=true",
		"ADDED circuitbreaker stock found=true replaced=false",
		"REMOVED circuitbreaker payment found=false replaced=false",
	}, got)
	assert.Equal(t, "EventType(7)", registry.EventType(7).String())
}

func TestTags(t *testing.T) {
	reg := registry.New()
	require.NoError(t, reg.AddCircuitBreaker(breaker(t, "payment")))
	tags := map[string]string{"team": "checkout"}
	require.NoError(t, reg.SetTags(registry.CircuitBreaker, "payment", tags))
	tags["team"] = "changed after the call"
	assert.Equal(t, map[string]string{"team": "checkout"}, reg.Tags(registry.CircuitBreaker, "payment"))
	assert.Nil(t, reg.Tags(registry.Retry, "payment"), "tags belong to one pattern's instance")

	err := reg.SetTags(registry.Retry, "payment", tags)
	require.ErrorIs(t, err, registry.ErrNotFound)
	assert.EqualError(t, err, `registry: no instance with that name: retry "payment"`)

	require.NoError(t, reg.SetTags(registry.CircuitBreaker, "payment", nil))
	assert.Nil(t, reg.Tags(registry.CircuitBreaker, "payment"))
	require.NoError(t, reg.SetTags(registry.CircuitBreaker, "payment", tags))
	reg.RemoveCircuitBreaker("payment")
	require.NoError(t, reg.AddCircuitBreaker(breaker(t, "payment")))
	assert.Nil(t, reg.Tags(registry.CircuitBreaker, "payment"), "tags leave with their instance")
}

// Many goroutines add, find, list and remove at once; -race checks the locking, and every
// instance ends up counted once.
func TestHammer(t *testing.T) {
	reg := registry.New()
	var events sync.Map
	defer reg.Subscribe(func(e registry.Event) { events.Store(e.Name+e.Type.String(), true) })()
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				name := fmt.Sprintf("cb-%d-%d", g, i)
				cb, err := circuitbreaker.New(name, circuitbreaker.Config{})
				if !assert.NoError(t, err) {
					return
				}
				assert.NoError(t, reg.AddCircuitBreaker(cb))
				_, ok := reg.FindCircuitBreaker(name)
				assert.True(t, ok)
				_ = reg.CircuitBreakers()
				if i%2 == 1 {
					_, ok := reg.RemoveCircuitBreaker(name)
					assert.True(t, ok)
				}
			}
		}()
	}
	wg.Wait()
	assert.Len(t, reg.CircuitBreakers(), 16*25)
	n := 0
	events.Range(func(any, any) bool { n++; return true })
	assert.Equal(t, 16*50+16*25, n, "one ADDED per instance, one REMOVED per removed one")
}
