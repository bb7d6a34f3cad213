package circuitbreaker_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/levee-go/levee/circuitbreaker"
)

// CallStats: the cumulative figures an exporter reads when it scrapes, kept by the breaker
// across transitions (Metrics starts afresh with each state).
func ExampleCircuitBreaker_CallStats() {
	breaker, _ := circuitbreaker.New("inventory", circuitbreaker.Config{SlidingWindowSize: 4})
	for _, took := range []time.Duration{3 * time.Millisecond, 40 * time.Millisecond, 2 * time.Second} {
		permit, _ := breaker.Acquire()
		permit.OnSuccessWithDuration(took)
	}
	permit, _ := breaker.Acquire()
	permit.OnErrorWithDuration(7*time.Millisecond, errors.New("connection reset"))
	_ = breaker.TransitionToOpenState()
	_, err := breaker.Acquire()
	fmt.Println(err != nil)
	_ = breaker.TransitionToClosedState() // a fresh window, the same CallStats

	s := breaker.CallStats()
	fmt.Println("successful:", s.Successful.Count, "in", s.Successful.TotalDuration, "longest", s.Successful.MaxDuration)
	fmt.Println("failed:", s.Failed.Count, "in", s.Failed.TotalDuration)
	bounds := circuitbreaker.CallDurationBuckets()
	for i, n := range s.Successful.Buckets {
		if n > 0 {
			fmt.Printf("  %d call(s) <= %v\n", n, bounds[i])
		}
	}
	fmt.Println("not permitted:", s.NotPermitted, "- calls in the new window:", breaker.Metrics().NumberOfBufferedCalls)
	// Output:
	// true
	// successful: 3 in 2.043s longest 2s
	// failed: 1 in 7ms
	//   1 call(s) <= 5ms
	//   1 call(s) <= 50ms
	//   1 call(s) <= 2.5s
	// not permitted: 1 - calls in the new window: 0
}

// SubscribeTypes with the transitions only: the breaker builds no event for the calls, which
// keep their one clock reading.
func ExampleCircuitBreaker_SubscribeTypes() {
	breaker, _ := circuitbreaker.New("inventory", circuitbreaker.Config{SlidingWindowSize: 2, MinimumNumberOfCalls: 2})
	breaker.SubscribeTypes(func(e circuitbreaker.Event) { fmt.Println(e) },
		circuitbreaker.EventStateTransition, circuitbreaker.EventFailureRateExceeded)
	for range 2 {
		permit, _ := breaker.Acquire()
		permit.OnError(errors.New("connection reset"))
	}
	// Output:
	// CircuitBreaker 'inventory' exceeded failure rate threshold. Current failure rate: 100
	// CircuitBreaker 'inventory' changed state from CLOSED to OPEN
}
