package circuitbreaker_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/levee-go/levee/circuitbreaker"
)

// Events as a channel: the first event gives the state at subscription, the channel never
// makes a call wait (a full buffer drops and counts) and it is closed when ctx is done.
func ExampleCircuitBreaker_Events() {
	breaker, err := circuitbreaker.New("payment", circuitbreaker.Config{
		SlidingWindowSize:    2,
		MinimumNumberOfCalls: 2,
	})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	events, dropped := breaker.Events(ctx, 16)

	down := errors.New("gateway down")
	for range 3 {
		_, _ = circuitbreaker.Execute(context.Background(), breaker, func(context.Context) (string, error) {
			return "", down
		})
	}
	cancel() // ends the subscription and closes the channel after the buffered events
	for e := range events {
		if e.Type == circuitbreaker.EventError {
			continue // their messages carry the elapsed time
		}
		fmt.Println(e)
	}
	fmt.Println("dropped:", dropped())
	// Output:
	// CircuitBreaker 'payment' is in state CLOSED
	// CircuitBreaker 'payment' exceeded failure rate threshold. Current failure rate: 100
	// CircuitBreaker 'payment' changed state from CLOSED to OPEN
	// CircuitBreaker 'payment' recorded a call which was not permitted.
	// dropped: 0
}

// Events as an iterator: each range subscribes, and break (or ctx) ends the subscription.
func ExampleCircuitBreaker_EventSeq() {
	breaker, err := circuitbreaker.New("payment", circuitbreaker.Config{})
	if err != nil {
		panic(err)
	}
	seq, _ := breaker.EventSeq(context.Background(), 16)
	for e := range seq {
		fmt.Println(e) // the initial state
		break
	}
	// Output:
	// CircuitBreaker 'payment' is in state CLOSED
}

// The typed hook: no type switch, and it may read the breaker it watches.
func ExampleCircuitBreaker_OnStateChange() {
	breaker, err := circuitbreaker.New("payment", circuitbreaker.Config{})
	if err != nil {
		panic(err)
	}
	stop := breaker.OnStateChange(func(from, to circuitbreaker.State) {
		fmt.Printf("%v -> %v (now %v)\n", from, to, breaker.State())
	})
	defer stop()
	_ = breaker.TransitionToForcedOpenState()
	_ = breaker.TransitionToClosedState()
	// Output:
	// CLOSED -> FORCED_OPEN (now FORCED_OPEN)
	// FORCED_OPEN -> CLOSED (now CLOSED)
}
