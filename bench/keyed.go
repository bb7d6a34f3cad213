package bench

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/keyed"
)

// keyedKeys is the number of keys the keyed cases hold and pick from.
const keyedKeys = 64

// KeyedCases returns a lookup of one of 64 keys plus one successful call through the key's
// breaker: levee's keyed.Keyed of circuit breakers (Get, then Acquire and OnSuccess, the
// two-step form a middleware uses), and the plain alternative, a map guarded by a mutex of
// gobreaker v2 breakers (Execute). Each holds every key from the start, so every lookup hits,
// and each call picks its key uniformly at random with math/rand/v2's per-thread generator,
// which costs a few nanoseconds and shares nothing between goroutines: the same keys, in the
// same distribution, for every case.
//
// levee's Keyed is measured twice: "levee" with IdleTimeout NoIdleTimeout, which keeps keys
// until MaxKeys (1,000) pushes the least recently used out, as the map keeps them (forever),
// and "levee-idle" with the default IdleTimeout of 10 minutes, whose Get reads the monotonic
// clock once more to stamp the key's last use.
func KeyedCases() ([]Case, error) {
	keys := make([]string, keyedKeys)
	for i := range keys {
		keys[i] = "host-" + strconv.Itoa(i)
	}
	newKeyed := func(idle time.Duration) (*keyed.Keyed[string, *circuitbreaker.CircuitBreaker], error) {
		k, err := keyed.New(keyed.Config{MaxKeys: 1000, IdleTimeout: idle}, func(host string) (*circuitbreaker.CircuitBreaker, error) {
			return circuitbreaker.New(host, circuitbreaker.Config{})
		})
		if err != nil {
			return nil, err
		}
		for _, key := range keys {
			if _, err := k.Get(key); err != nil {
				return nil, err
			}
		}
		return k, nil
	}
	kept, err := newKeyed(keyed.NoIdleTimeout)
	if err != nil {
		return nil, err
	}
	idle, err := newKeyed(0)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	gbs := make(map[string]*gobreaker.CircuitBreaker[int], keyedKeys)
	for _, key := range keys {
		gbs[key] = gobreaker.NewCircuitBreaker[int](gobreaker.Settings{Name: key})
	}
	pick := func() string { return keys[rand.N(keyedKeys)] }
	call := func(k *keyed.Keyed[string, *circuitbreaker.CircuitBreaker]) func(context.Context) error {
		return func(context.Context) error {
			cb, err := k.Get(pick())
			if err != nil {
				return err
			}
			p, err := cb.Acquire()
			if err != nil {
				return err
			}
			p.OnSuccess()
			return nil
		}
	}
	plain := func() (int, error) { return 1, nil }
	return []Case{
		{Impl: "levee", Do: call(kept)},
		{Impl: "levee-idle", Do: call(idle)},
		{Impl: "map-gobreaker", Do: func(context.Context) error {
			key := pick()
			mu.Lock()
			cb := gbs[key]
			mu.Unlock()
			_, err := cb.Execute(plain)
			return err
		}},
	}, nil
}

// KeyedLookupCases returns the lookup alone of one of 64 keys, the part of KeyedCases that
// is not a breaker's: levee's Get ("levee" with NoIdleTimeout, "levee-idle" with the default
// IdleTimeout) and a read of a map under a mutex ("map-mutex"), each holding the same 64
// keys, picked as KeyedCases picks them. The instances are plain ints, so that no breaker's
// memory competes for the cache.
func KeyedLookupCases() ([]Case, error) {
	keys := make([]string, keyedKeys)
	for i := range keys {
		keys[i] = "host-" + strconv.Itoa(i)
	}
	newKeyed := func(idle time.Duration) (*keyed.Keyed[string, int], error) {
		k, err := keyed.New(keyed.Config{MaxKeys: 1000, IdleTimeout: idle}, func(string) (int, error) { return 1, nil })
		if err != nil {
			return nil, err
		}
		for _, key := range keys {
			if _, err := k.Get(key); err != nil {
				return nil, err
			}
		}
		return k, nil
	}
	kept, err := newKeyed(keyed.NoIdleTimeout)
	if err != nil {
		return nil, err
	}
	idle, err := newKeyed(0)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	m := make(map[string]int, keyedKeys)
	for _, key := range keys {
		m[key] = 1
	}
	errMissing := errors.New("missing key")
	get := func(k *keyed.Keyed[string, int]) func(context.Context) error {
		return func(context.Context) error {
			_, err := k.Get(keys[rand.N(keyedKeys)])
			return err
		}
	}
	return []Case{
		{Impl: "levee", Do: get(kept)},
		{Impl: "levee-idle", Do: get(idle)},
		{Impl: "map-mutex", Do: func(context.Context) error {
			key := keys[rand.N(keyedKeys)]
			mu.Lock()
			v := m[key]
			mu.Unlock()
			if v != 1 {
				return errMissing
			}
			return nil
		}},
	}, nil
}
