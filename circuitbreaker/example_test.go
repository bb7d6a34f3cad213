package circuitbreaker_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
)

var errGateway = errors.New("gateway 503")

// A breaker guarding a payment gateway that has gone down: once five calls have failed the
// breaker opens and later calls fail fast without reaching the gateway.
func Example() {
	breaker, err := circuitbreaker.New("payment", circuitbreaker.Config{
		SlidingWindowSize:                     10,
		MinimumNumberOfCalls:                  5,
		FailureRateThreshold:                  50,
		WaitDurationInOpenState:               time.Second,
		PermittedNumberOfCallsInHalfOpenState: 2,
	})
	if err != nil {
		panic(err)
	}
	breaker.Subscribe(func(e circuitbreaker.Event) {
		if e.Type == circuitbreaker.EventStateTransition {
			fmt.Println("  [event]", e)
		}
	})

	gatewayUp, gatewayCalls := false, 0
	pay := func(ctx context.Context) (string, error) {
		gatewayCalls++
		if !gatewayUp {
			return "", errGateway
		}
		return "PAID", nil
	}

	for i := 1; i <= 8; i++ {
		_, err := circuitbreaker.Execute(context.Background(), breaker, pay)
		switch {
		case errors.Is(err, circuitbreaker.ErrCallNotPermitted):
			fmt.Printf("call %d: blocked, state=%v, gateway calls=%d\n", i, breaker.State(), gatewayCalls)
		case err != nil:
			fmt.Printf("call %d: %v, state=%v, gateway calls=%d\n", i, err, breaker.State(), gatewayCalls)
		}
	}
	m := breaker.Metrics()
	fmt.Printf("failure rate=%v%% failed=%d not permitted=%d\n", m.FailureRate, m.NumberOfFailedCalls, m.NumberOfNotPermittedCalls)

	// The first call after WaitDurationInOpenState moves the breaker to HALF_OPEN by itself;
	// here the wait is skipped by moving it by hand.
	gatewayUp = true
	_ = breaker.TransitionToHalfOpenState()
	for i := 1; i <= 2; i++ {
		v, _ := circuitbreaker.Execute(context.Background(), breaker, pay)
		fmt.Printf("probe %d: %s, state=%v\n", i, v, breaker.State())
	}
	// Output:
	// call 1: gateway 503, state=CLOSED, gateway calls=1
	// call 2: gateway 503, state=CLOSED, gateway calls=2
	// call 3: gateway 503, state=CLOSED, gateway calls=3
	// call 4: gateway 503, state=CLOSED, gateway calls=4
	//   [event] CircuitBreaker 'payment' changed state from CLOSED to OPEN
	// call 5: gateway 503, state=OPEN, gateway calls=5
	// call 6: blocked, state=OPEN, gateway calls=5
	// call 7: blocked, state=OPEN, gateway calls=5
	// call 8: blocked, state=OPEN, gateway calls=5
	// failure rate=100% failed=5 not permitted=3
	//   [event] CircuitBreaker 'payment' changed state from OPEN to HALF_OPEN
	// probe 1: PAID, state=HALF_OPEN
	//   [event] CircuitBreaker 'payment' changed state from HALF_OPEN to CLOSED
	// probe 2: PAID, state=CLOSED
}

type invalidOrderError struct{ reason string }

func (e *invalidOrderError) Error() string { return "invalid order: " + e.reason }

// Errors that say nothing about the dependency's health — here a customer's invalid order —
// are ignored: neither success nor failure.
func ExampleConfig_ignoreErrors() {
	breaker, _ := circuitbreaker.New("payment", circuitbreaker.Config{
		SlidingWindowSize: 10,
		IgnoreErrors:      []error{levee.ErrorType[*invalidOrderError]()},
	})
	_, err := circuitbreaker.Execute(context.Background(), breaker, func(context.Context) (int, error) {
		return 0, fmt.Errorf("charge: %w", &invalidOrderError{"card expired"})
	})
	fmt.Println(err)
	_, err = circuitbreaker.Execute(context.Background(), breaker, func(context.Context) (int, error) {
		return 0, errGateway
	})
	fmt.Println(err)
	m := breaker.Metrics()
	fmt.Printf("buffered=%d failed=%d\n", m.NumberOfBufferedCalls, m.NumberOfFailedCalls)
	// Output:
	// charge: invalid order: card expired
	// gateway 503
	// buffered=1 failed=1
}

// The permit API splits a call into admission and outcome, for code that cannot wrap the call
// in a function — a stream, a future, a callback.
func ExampleCircuitBreaker_Acquire() {
	breaker, _ := circuitbreaker.New("inventory", circuitbreaker.Config{SlidingWindowSize: 2})
	for _, outcome := range []error{errGateway, errGateway, nil} {
		permit, err := breaker.Acquire()
		if err != nil {
			fmt.Println(err)
			continue
		}
		// ... start the work; when it completes, report it on its permit, which measures it:
		if outcome != nil {
			permit.OnError(outcome)
		} else {
			permit.OnSuccess()
		}
		fmt.Println("recorded", outcome, "state", breaker.State())
	}
	// Output:
	// recorded gateway 503 state CLOSED
	// recorded gateway 503 state OPEN
	// circuitbreaker: CircuitBreaker 'inventory' is OPEN and does not permit further calls
}

// A rejection by an inner pattern (here a full bulkhead) says nothing about the dependency:
// even a catch-all record predicate never sees it, and the breaker ignores it. Listing it in
// RecordRejections counts it as a failure instead.
func ExampleConfig_recordRejections() {
	full := &bulkhead.BulkheadFullError{Name: "inventory"}
	for _, cfg := range []circuitbreaker.Config{
		{SlidingWindowSize: 10, RecordErrorPredicate: func(err error) bool { return true }},
		{SlidingWindowSize: 10, RecordRejections: []error{bulkhead.ErrBulkheadFull}},
	} {
		breaker, _ := circuitbreaker.New("inventory", cfg)
		_, err := circuitbreaker.Execute(context.Background(), breaker, func(context.Context) (int, error) {
			return 0, full
		})
		m := breaker.Metrics()
		fmt.Printf("%v: buffered=%d failed=%d\n", err, m.NumberOfBufferedCalls, m.NumberOfFailedCalls)
	}
	// Output:
	// bulkhead: Bulkhead 'inventory' is full and does not permit further calls: buffered=0 failed=0
	// bulkhead: Bulkhead 'inventory' is full and does not permit further calls: buffered=1 failed=1
}

// A 429 carrying Retry-After opens the breaker until then: later calls fail fast instead of
// hitting a dependency that asked to be left alone.
func ExampleOpenFor() {
	breaker, _ := circuitbreaker.New("search", circuitbreaker.Config{
		TransitionOnResult: func(result any, err error) circuitbreaker.Transition {
			if resp, ok := result.(*http.Response); ok && resp.StatusCode == http.StatusTooManyRequests {
				if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
					return circuitbreaker.OpenFor(time.Duration(secs) * time.Second)
				}
			}
			return circuitbreaker.Transition{}
		},
	})
	call := func(context.Context) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"30"}}}, nil
	}
	resp, _ := circuitbreaker.Execute(context.Background(), breaker, call)
	fmt.Println(resp.StatusCode, breaker.State())
	_, err := circuitbreaker.Execute(context.Background(), breaker, call)
	fmt.Println(err)
	// Output:
	// 429 OPEN
	// circuitbreaker: CircuitBreaker 'search' is OPEN and does not permit further calls
}

// An integration that already times its calls (here a client reporting the server's own
// latency) reports that duration on the permit instead of the permit's own timing; it decides
// the slow-call rate.
func ExamplePermit_OnSuccessWithDuration() {
	breaker, _ := circuitbreaker.New("search", circuitbreaker.Config{
		SlidingWindowSize:         2,
		SlowCallDurationThreshold: 500 * time.Millisecond,
		SlowCallRateThreshold:     50,
	})
	for _, took := range []time.Duration{120 * time.Millisecond, 900 * time.Millisecond} {
		permit, err := breaker.Acquire()
		if err != nil {
			fmt.Println(err)
			continue
		}
		permit.OnSuccessWithDuration(took)
	}
	m := breaker.Metrics()
	fmt.Println("slow calls:", m.NumberOfSlowCalls, "of", m.NumberOfBufferedCalls, "- total", m.TotalDuration)
	fmt.Println("state:", breaker.State())
	// Output:
	// slow calls: 1 of 2 - total 1.02s
	// state: OPEN
}
