package keyed_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/keyed"
)

// counter creates "<key>#<n>", n counting the creations of all keys.
type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) create(k string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return fmt.Sprintf("%s#%d", k, c.n), nil
}

func record[K comparable, V any](k *keyed.Keyed[K, V]) *[]string {
	var got []string
	var mu sync.Mutex
	k.Subscribe(func(e keyed.Eviction[K, V]) {
		mu.Lock()
		got = append(got, fmt.Sprintf("%v=%v %v", e.Key, e.Value, e.Cause))
		mu.Unlock()
	})
	return &got
}

func TestConfigValidation(t *testing.T) {
	c := &counter{}
	for _, tc := range []struct {
		cfg  keyed.Config
		want string
	}{
		{keyed.Config{MaxKeys: -1}, "keyed: MaxKeys must be in [1, 1073741824], got -1"},
		{keyed.Config{MaxKeys: 1<<30 + 1}, "keyed: MaxKeys must be in [1, 1073741824], got 1073741825"},
		{keyed.Config{IdleTimeout: -2}, "keyed: IdleTimeout must be > 0 or NoIdleTimeout, got -2ns"},
		{keyed.Config{IdleTimeout: -1}, "keyed: IdleTimeout must be > 0 or NoIdleTimeout, got -1ns"},
	} {
		k, err := keyed.New(tc.cfg, c.create)
		assert.Nil(t, k)
		assert.EqualError(t, err, tc.want)
	}
	_, err := keyed.New[string, string](keyed.Config{}, nil)
	assert.EqualError(t, err, "keyed: create must be a non-nil function, got nil")
	k, err := keyed.New(keyed.Config{}, c.create)
	require.NoError(t, err)
	assert.Equal(t, keyed.Config{MaxKeys: 10_000, IdleTimeout: 10 * time.Minute}, k.Config())
	assert.Equal(t, keyed.DefaultConfig(), k.Config())
	k, err = keyed.New(keyed.Config{IdleTimeout: keyed.NoIdleTimeout}, c.create)
	require.NoError(t, err)
	assert.Equal(t, keyed.NoIdleTimeout, k.Config().IdleTimeout)
	assert.Equal(t, "CAPACITY IDLE REMOVED Cause(0)", fmt.Sprint(keyed.Capacity, keyed.Idle, keyed.Removed, keyed.Cause(0)))
}

func TestLeastRecentlyUsedGoesFirst(t *testing.T) {
	c := &counter{}
	k, err := keyed.New(keyed.Config{MaxKeys: 2, IdleTimeout: keyed.NoIdleTimeout}, c.create)
	require.NoError(t, err)
	got := record(k)
	for _, key := range []string{"a", "b", "a", "c", "b", "a"} {
		_, err := k.Get(key)
		require.NoError(t, err)
	}
	// a, b; a again; c evicts b; b evicts a; a evicts c.
	assert.Equal(t, []string{"b=b#2 CAPACITY", "a=a#1 CAPACITY", "c=c#3 CAPACITY"}, *got)
	var keys []string
	for key, v := range k.All() {
		keys = append(keys, key+"="+v)
	}
	assert.Equal(t, []string{"a=a#5", "b=b#4"}, keys, "most recently used first")
	assert.Equal(t, keyed.Metrics{Keys: 2, Hits: 1, Misses: 5, Created: 5, EvictedCapacity: 3}, k.Metrics())

	assert.True(t, k.Remove("a"))
	assert.False(t, k.Remove("a"))
	k.Clear()
	assert.Equal(t, []string{"b=b#2 CAPACITY", "a=a#1 CAPACITY", "c=c#3 CAPACITY", "a=a#5 REMOVED", "b=b#4 REMOVED"}, *got)
	assert.Equal(t, keyed.Metrics{Hits: 1, Misses: 5, Created: 5, EvictedCapacity: 3, Removed: 2}, k.Metrics())
}

// Idle keys go at the next access after IdleTimeout; a Get keeps a key alive.
func TestIdleTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &counter{}
		k, err := keyed.New(keyed.Config{MaxKeys: 10, IdleTimeout: time.Minute}, c.create)
		require.NoError(t, err)
		got := record(k)
		k.Get("a")
		k.Get("b")
		time.Sleep(30 * time.Second)
		k.Get("a")
		time.Sleep(30 * time.Second) // b idle for exactly a minute
		assert.Equal(t, 1, k.Metrics().Keys, "a metrics read is an access: b goes now")
		assert.Equal(t, []string{"b=b#2 IDLE"}, *got)
		time.Sleep(29 * time.Second)
		v, err := k.Get("a") // idle 59 s: still there
		require.NoError(t, err)
		assert.Equal(t, "a#1", v)
		time.Sleep(time.Minute)
		assert.Equal(t, 1, k.EvictIdle())
		assert.Equal(t, 0, k.EvictIdle())
		assert.Equal(t, []string{"b=b#2 IDLE", "a=a#1 IDLE"}, *got)
		assert.Equal(t, keyed.Metrics{Hits: 2, Misses: 2, Created: 2, EvictedIdle: 2}, k.Metrics())
		v, _ = k.Get("a")
		assert.Equal(t, "a#3", v, "created again")
	})
}

func TestCreateOncePerKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		calls := 0
		k, err := keyed.New(keyed.Config{}, func(key int) (int, error) {
			calls++
			<-release
			if key < 0 {
				return 0, errors.New("negative")
			}
			return key * 10, nil
		})
		require.NoError(t, err)
		var wg sync.WaitGroup
		results := make([]int, 5)
		for i := range results {
			wg.Go(func() { results[i], _ = k.Get(3) })
		}
		synctest.Wait()
		assert.Equal(t, 1, calls)
		assert.Equal(t, 1, k.Metrics().Keys, "the creation under way counts")
		assert.Empty(t, func() (keys []int) {
			for key := range k.All() {
				keys = append(keys, key)
			}
			return keys
		}(), "but is not listed")
		close(release)
		wg.Wait()
		assert.Equal(t, []int{30, 30, 30, 30, 30}, results)

		_, err = k.Get(-1)
		assert.EqualError(t, err, "negative")
		_, err = k.Get(-1)
		assert.EqualError(t, err, "negative", "a failure is not kept")
		assert.Equal(t, 3, calls)
		assert.Equal(t, keyed.Metrics{Keys: 1, Hits: 4, Misses: 3, Created: 1, CreateErrors: 2}, k.Metrics())
	})
}

func TestCreatePanics(t *testing.T) {
	k, err := keyed.New(keyed.Config{}, func(string) (int, error) { panic("boom") })
	require.NoError(t, err)
	_, err = k.Get("x")
	var pe *levee.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "boom", pe.Value)
	assert.Equal(t, keyed.Metrics{Misses: 1, CreateErrors: 1}, k.Metrics())
}

func TestHitAllocatesNothing(t *testing.T) {
	c := &counter{}
	k, err := keyed.New(keyed.Config{MaxKeys: 4}, c.create)
	require.NoError(t, err)
	k.Get("a")
	k.Get("b")
	keys := []string{"a", "b"}
	i := 0
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		i++
		if _, err := k.Get(keys[i%2]); err != nil {
			t.Fatal(err)
		}
	}))
}

// One breaker per host, and the states counted over all of them: six series, however many
// hosts.
func TestCircuitBreakerStates(t *testing.T) {
	k, err := keyed.New(keyed.Config{MaxKeys: 100}, func(host string) (*circuitbreaker.CircuitBreaker, error) {
		return circuitbreaker.New(host, circuitbreaker.Config{})
	})
	require.NoError(t, err)
	for i := range 10 {
		cb, err := k.Get(fmt.Sprint("host-", i))
		require.NoError(t, err)
		switch {
		case i < 3:
			require.NoError(t, cb.TransitionToOpenState())
		case i == 3:
			require.NoError(t, cb.TransitionToForcedOpenState())
		}
	}
	assert.Equal(t, map[circuitbreaker.State]int{
		circuitbreaker.Closed: 6, circuitbreaker.Open: 3, circuitbreaker.HalfOpen: 0,
		circuitbreaker.Disabled: 0, circuitbreaker.ForcedOpen: 1, circuitbreaker.MetricsOnly: 0,
	}, keyed.CircuitBreakerStates(k))
	assert.Equal(t, map[string]int{"CLOSED": 6, "OPEN": 3, "FORCED_OPEN": 1}, keyed.CountBy(k, func(cb *circuitbreaker.CircuitBreaker) string {
		return cb.State().String()
	}))
}
