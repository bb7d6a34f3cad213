// Command quickstart is the README's quick start as a whole program: a payment gateway on
// loopback, guarded by a circuit breaker, a retry and a bulkhead in Resilience4j's default
// order, with a fallback that answers PENDING instead of failing. It charges one order while
// the gateway is healthy and one while it fails, and prints how each was answered.
package main

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/examples/payment"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/retry"
)

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	g, err := payment.Start()
	if err != nil {
		return err
	}
	defer g.Close()
	gateway := payment.NewClient(g.URL())
	defer gateway.Close()

	// The configs are literals: one error to check for the three patterns.
	ps, err := levee.NewPatterns("payment", levee.Configs{
		CircuitBreaker: &circuitbreaker.Config{
			SlidingWindowSize: 10, MinimumNumberOfCalls: 5, WaitDurationInOpenState: 3 * time.Second,
		},
		Retry: &retry.Config{
			MaxAttempts:      3,
			IntervalFunction: levee.Must(retry.ExponentialBackoff(100*time.Millisecond, 2, 0)),
		},
		Bulkhead: &bulkhead.Config{MaxConcurrentCalls: 3},
	})
	if err != nil {
		return err
	}
	pending, err := fallback.New("payment", fallback.OnAny(func(ctx context.Context, err error) (string, error) {
		return "PENDING", nil // an honest answer, not "PAID"
	}))
	if err != nil {
		return err
	}

	// Fallback(Retry(CircuitBreaker(Bulkhead(call)))): Resilience4j's annotation order.
	pay := levee.DefaultPipeline(ps, pending)

	ctx := context.Background()
	for _, mode := range []payment.Mode{payment.ModeOK, payment.ModeFail} {
		g.SetMode(mode)
		status, outcome, err := pay.ExecuteOutcome(ctx, func(ctx context.Context) (string, error) {
			return gateway.Charge(ctx, "DH001")
		})
		fmt.Printf("gateway %-4s -> %s (fallback answered: %v, cause: %v, err: %v)\n", mode, status, outcome.Fallback, outcome.Cause, err)
	}
	m := ps.CircuitBreaker.Metrics()
	fmt.Printf("breaker %v, %d calls recorded, %d failed; gateway received %d requests\n",
		m.State, m.NumberOfBufferedCalls, m.NumberOfFailedCalls, g.Received())
	return nil
}
