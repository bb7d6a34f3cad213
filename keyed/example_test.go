package keyed_test

import (
	"fmt"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/keyed"
)

// One circuit breaker per host, at most two hosts held: the least recently used breaker is
// evicted, and the eviction consumer sees it go.
func Example() {
	breakers, err := keyed.New(keyed.Config{MaxKeys: 2}, func(host string) (*circuitbreaker.CircuitBreaker, error) {
		return circuitbreaker.New(host, circuitbreaker.Config{})
	})
	if err != nil {
		panic(err)
	}
	breakers.Subscribe(func(e keyed.Eviction[string, *circuitbreaker.CircuitBreaker]) {
		fmt.Println("evicted", e.Key, e.Cause)
	})
	for _, host := range []string{"a.example", "b.example", "a.example", "c.example"} {
		cb, err := breakers.Get(host)
		if err != nil {
			panic(err)
		}
		fmt.Println(cb.Name(), cb.State())
	}
	m := breakers.Metrics()
	fmt.Println("keys", m.Keys, "hits", m.Hits, "misses", m.Misses, "evicted", m.EvictedCapacity)
	// Output:
	// a.example CLOSED
	// b.example CLOSED
	// a.example CLOSED
	// evicted b.example CAPACITY
	// c.example CLOSED
	// keys 2 hits 1 misses 3 evicted 1
}

// The states of all breakers as counts per state: six series for a gauge, however many hosts.
func ExampleCircuitBreakerStates() {
	breakers, err := keyed.New(keyed.Config{}, func(host string) (*circuitbreaker.CircuitBreaker, error) {
		return circuitbreaker.New(host, circuitbreaker.Config{})
	})
	if err != nil {
		panic(err)
	}
	for _, host := range []string{"a", "b", "c"} {
		cb, _ := breakers.Get(host)
		if host == "b" {
			cb.TransitionToOpenState()
		}
	}
	states := keyed.CircuitBreakerStates(breakers)
	for s := circuitbreaker.Closed; s <= circuitbreaker.MetricsOnly; s++ {
		fmt.Println(s, states[s])
	}
	// Output:
	// CLOSED 2
	// OPEN 1
	// HALF_OPEN 0
	// DISABLED 0
	// FORCED_OPEN 0
	// METRICS_ONLY 0
}
