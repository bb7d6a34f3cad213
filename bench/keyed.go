package bench

import (
	"context"
	"strconv"
	"sync"

	"github.com/sony/gobreaker/v2"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/keyed"
)

// keyedKeys is the number of keys the keyed cases hold and cycle through.
const keyedKeys = 64

// KeyedCases returns a lookup of one of 64 keys plus one successful call through the key's
// breaker: levee's keyed.Keyed of circuit breakers (Get, then Acquire and OnSuccess, the
// two-step form a middleware uses), and the plain alternative, a map guarded by a mutex of
// gobreaker v2 breakers (Execute). Both hold every key from the start, so every lookup hits.
// Each goroutine cycles through the keys in its own order.
func KeyedCases() ([]Case, error) {
	keys := make([]string, keyedKeys)
	for i := range keys {
		keys[i] = "host-" + strconv.Itoa(i)
	}
	k, err := keyed.New(keyed.Config{MaxKeys: 1000}, func(host string) (*circuitbreaker.CircuitBreaker, error) {
		return circuitbreaker.New(host, circuitbreaker.Config{})
	})
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	gbs := make(map[string]*gobreaker.CircuitBreaker[int], keyedKeys)
	for _, key := range keys {
		if _, err := k.Get(key); err != nil {
			return nil, err
		}
		gbs[key] = gobreaker.NewCircuitBreaker[int](gobreaker.Settings{Name: key})
	}
	var next sync.Pool // a per-goroutine-ish cursor without contention on one counter
	next.New = func() any { return new(int) }
	pick := func() string {
		i := next.Get().(*int)
		*i = (*i + 1) % keyedKeys
		key := keys[*i]
		next.Put(i)
		return key
	}
	plain := func() (int, error) { return 1, nil }
	return []Case{
		{Impl: "levee", Do: func(context.Context) error {
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
		}},
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
