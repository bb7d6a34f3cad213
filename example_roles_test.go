package levee_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/throttle"
)

// Patterns of any kind join a pipeline through the fields of their role: a throttle in a
// breaker's place (Admission), an adaptive limit in a bulkhead's place (ConcurrencyLimiter).
// Each attempt of the retry is one request for the throttle and holds one adaptive permit.
func ExamplePatterns_roles() {
	errOverloaded := errors.New("overloaded")
	th := levee.Must(throttle.New("payment", throttle.Config{
		RecordErrors: []error{errOverloaded},
		Random:       func() float64 { return 0.5 }, // a fixed draw, for the example
	}))
	limit := levee.Must(adaptive.New("payment", adaptive.Config{InitialLimit: 10}))
	rt := levee.Must(retry.New("payment", retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait}))
	p := levee.DefaultPipeline[string](levee.Patterns{Retry: rt, Admission: th, ConcurrencyLimiter: limit}, nil)

	calls := 0
	_, err := p.Execute(context.Background(), func(context.Context) (string, error) {
		calls++
		return "", errOverloaded
	})
	m := th.Metrics()
	fmt.Println("calls sent:", calls)
	fmt.Println("throttled:", errors.Is(err, throttle.ErrThrottled))
	fmt.Printf("requests %d, accepts %d, rejection probability %.2f\n", m.Requests, m.Accepts, m.RejectionProbability)
	fmt.Println("adaptive permits:", limit.Metrics().Permitted, "in flight:", limit.Metrics().InFlight)
	// Output:
	// calls sent: 2
	// throttled: true
	// requests 2, accepts 0, rejection probability 0.67
	// adaptive permits: 2 in flight: 0
}
