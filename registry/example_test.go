package registry_test

import (
	"fmt"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/keyed"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/retry"
)

// A service registers its instances once; handlers and observers find them by name.
func Example() {
	reg := registry.New()
	reg.Subscribe(func(e registry.Event) { fmt.Println(e.Type, e.Pattern, e.Name) })

	cb, _ := circuitbreaker.New("payment", circuitbreaker.Config{})
	rt, _ := retry.New("payment", retry.Config{})
	_ = reg.AddCircuitBreaker(cb)
	_ = reg.AddRetry(rt)
	_ = reg.SetTags(registry.CircuitBreaker, "payment", map[string]string{"team": "checkout"})

	found, ok := reg.FindCircuitBreaker("payment")
	fmt.Println(found.Name(), found.State(), ok, reg.Tags(registry.CircuitBreaker, "payment"))
	fmt.Println(reg)
	// Output:
	// ADDED circuitbreaker payment
	// ADDED retry payment
	// payment CLOSED true map[team:checkout]
	// registry{circuitbreaker: payment; retry: payment}
}

// Instances made by name inherit from shared configs, as Resilience4j's
// registry.circuitBreaker(name) with configs.default and baseConfig.
func ExampleRegistry_CircuitBreaker() {
	reg := registry.New()
	reg.SetCircuitBreakerConfig(registry.DefaultConfigName, circuitbreaker.Config{SlidingWindowSize: 10})
	reg.SetCircuitBreakerConfig("strict", circuitbreaker.Config{SlidingWindowSize: 10, FailureRateThreshold: 20})
	reg.ConfigureCircuitBreaker("payment", registry.InstanceConfig[circuitbreaker.Config]{
		BaseConfig: "strict",
		Tune:       func(c *circuitbreaker.Config) { c.MinimumNumberOfCalls = 5 },
	})

	payment, _ := reg.CircuitBreaker("payment")
	stock, _ := reg.CircuitBreaker("stock") // no InstanceConfig: the default config
	again, _ := reg.CircuitBreaker("payment")
	p, s := payment.Config(), stock.Config()
	fmt.Println(p.SlidingWindowSize, p.MinimumNumberOfCalls, p.FailureRateThreshold, again == payment)
	fmt.Println(s.SlidingWindowSize, s.MinimumNumberOfCalls, s.FailureRateThreshold)
	// Output:
	// 10 5 20 true
	// 10 100 50
}

// A keyed family (a breaker per host) joins the registry under a name, so that the observers
// show its keys, evictions and breakers per state: figures for the whole set, whatever the
// number of hosts.
func ExampleNewKeyedFamily() {
	hosts, _ := keyed.New(keyed.Config{MaxKeys: 2}, func(host string) (*circuitbreaker.CircuitBreaker, error) {
		return circuitbreaker.New(host, circuitbreaker.Config{})
	})
	family, _ := registry.NewKeyedFamily("upstreams", hosts, registry.KeyedFamilyConfig{})
	reg := registry.New()
	_ = reg.AddKeyed(family)

	a, _ := hosts.Get("a.example")
	_ = a.TransitionToForcedOpenState() // protected: never evicted
	_, _ = hosts.Get("b.example")
	_, _ = hosts.Get("c.example") // one key too many: b goes

	f, _ := reg.FindKeyed("upstreams")
	m := f.Metrics()
	states, _ := f.CircuitBreakerStates()
	fmt.Println(m.Keys, m.EvictedCapacity, states[circuitbreaker.Closed], states[circuitbreaker.ForcedOpen])
	// Output:
	// 2 1 1 1
}
