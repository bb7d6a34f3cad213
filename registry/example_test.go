package registry_test

import (
	"fmt"

	"github.com/levee-go/levee/circuitbreaker"
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
