package levee_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/retry"
)

var errGateway = errors.New("gateway 503")

// The payment service of the seed: Retry outside the CircuitBreaker, and a fallback outermost
// that answers PENDING rather than PAID when the gateway cannot be reached. After the breaker
// opens, the retry does not retry its rejections (levee's default) and the fallback answers at
// once.
func ExampleDefaultPipeline() {
	cb, _ := circuitbreaker.New("payment", circuitbreaker.Config{SlidingWindowSize: 10, MinimumNumberOfCalls: 5})
	rt, _ := retry.New("payment", retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
	pending, _ := fallback.New("payment", fallback.OnAny(func(ctx context.Context, err error) (string, error) {
		if errors.Is(err, circuitbreaker.ErrCallNotPermitted) {
			return "PENDING (breaker open)", nil
		}
		return "PENDING (gateway error)", nil
	}))
	pay := levee.DefaultPipeline(levee.Patterns{Retry: rt, CircuitBreaker: cb}, pending)

	gatewayCalls := 0
	charge := func(ctx context.Context) (string, error) {
		gatewayCalls++
		return "", errGateway
	}
	for i := 1; i <= 3; i++ {
		status, outcome, err := pay.ExecuteOutcome(context.Background(), charge)
		fmt.Printf("request %d: %s fallback=%v err=%v gateway calls so far=%d\n", i, status, outcome.Fallback, err, gatewayCalls)
	}
	fmt.Println("breaker:", cb.State())
	// Output:
	// request 1: PENDING (gateway error) fallback=true err=<nil> gateway calls so far=3
	// request 2: PENDING (breaker open) fallback=true err=<nil> gateway calls so far=5
	// request 3: PENDING (breaker open) fallback=true err=<nil> gateway calls so far=5
	// breaker: OPEN
}

// Of builds the chain in explicit order, as Resilience4j's Decorators: the last With... is the
// outermost layer. Here the breaker sits outside the retry, so it records one outcome per
// request however many attempts the retry makes.
func ExampleOf() {
	cb, _ := circuitbreaker.New("pricing", circuitbreaker.DefaultConfig())
	rt, _ := retry.New("pricing", retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
	attempts := 0
	price := levee.Of(func(ctx context.Context) (int, error) {
		attempts++
		if attempts < 3 {
			return 0, errGateway
		}
		return 1999, nil
	}).WithRetry(rt).WithCircuitBreaker(cb).Decorate()

	cents, err := price(context.Background())
	m := cb.Metrics()
	fmt.Println(cents, err, attempts, "attempts;", m.NumberOfSuccessfulCalls, "success recorded,", m.NumberOfFailedCalls, "failures")
	// Output: 1999 <nil> 3 attempts; 1 success recorded, 0 failures
}

// Apply guards a call with an argument, such as a stream element, without a closure per call.
func ExampleApply() {
	p := levee.Compose[string]() // any composition; empty here
	greet := func(ctx context.Context, name string) (string, error) { return "hello " + name, nil }
	v, err := levee.Apply(context.Background(), p, greet, "levee")
	fmt.Println(v, err)
	// Output: hello levee <nil>
}
