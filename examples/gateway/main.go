// Command gateway replays the scenarios of two Resilience4j tutorial articles on a real HTTP
// payment gateway listening on 127.0.0.1, and checks every figure it measures against the one
// the article reports. The payment article guards a Spring Boot payment service's calls to a
// third-party payment gateway with a CircuitBreaker, a Retry and a Bulkhead (Resilience4j
// 2.3.0) and measures them; the composition article (Resilience4j 2.4.0) sets the rules of
// fallbacks and of the order in which the patterns compose.
//
//	go run ./examples/gateway
//
// Each scenario prints its configuration in one line, a trace of what happened (state
// transitions, attempts, answers, timings), then a table of figures, expected next to measured,
// with a ✓ or ✗ in front of each. The run ends with a summary line and exits with status 0 only
// when every figure matches; otherwise it lists those that differ and exits with status 1.
//
// The gateway is examples/payment's: a net/http server whose mode (ok, fail with 503, slow,
// hang) the scenarios switch, which refuses orders starting with "BAD" with 422, and which counts
// the requests that really reach it. Those counters are the point: a breaker that stops calling,
// a bulkhead that keeps calls out or a time limiter that cancels an attempt shows up in what
// the gateway received, not in what the client believes. Timings are real (this is a program,
// not a test), so they are checked against a tolerance; the whole run takes about 7 seconds.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/examples/payment"
)

func main() { os.Exit(run()) }

// run starts the gateway, runs every scenario in the articles' order and returns the exit status.
func run() int {
	gw, err := payment.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		return 1
	}
	defer gw.Close()
	client := payment.NewClient(gw.URL())
	defer client.Close()
	fmt.Printf("payment gateway listening on %s\n", gw.URL())

	e := &env{gw: gw, client: client}
	start := time.Now()
	var tables []*table
	for _, scenario := range []func(*env) *table{
		// the payment article
		breakerLifecycle,
		retryBackoff,
		compositionOrder,
		paymentScenarios,
		bulkheadLimit,
		bulkheadTrap,
		// the composition article, "The recommended order and why"
		bulkheadPlacement,
		rateLimiterPlacement,
		retryThroughOpenBreaker,
		timeLimiterInRetry,
	} {
		t := scenario(e)
		t.print()
		tables = append(tables, t)
	}
	return summarize(tables, time.Since(start))
}

// env is what every scenario shares: the gateway and a client for it. Patterns are built
// afresh by each scenario, so no state leaks from one to the next.
type env struct {
	gw     *payment.Gateway
	client *payment.Client
}

// reset waits until the gateway has finished with the previous scenario's requests, then sets
// its mode and zeroes its counters.
func (e *env) reset(mode payment.Mode) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.gw.WaitIdle(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "gateway still busy:", err)
	}
	e.gw.OnRequest(nil)
	e.gw.SetLatency(payment.DefaultLatency)
	e.gw.SetMode(mode)
	e.gw.ResetCounters()
}

// waitIdle waits until no request is in the gateway's handlers, so that its counters include
// the requests whose callers have already given up.
func (e *env) waitIdle() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.gw.WaitIdle(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "gateway still busy:", err)
	}
}

// errorKind names the error a caller got the way the articles do (GatewayException,
// CallNotPermittedException, ...), in Go's words: the closest levee or gateway error in its
// chain.
func errorKind(err error) string {
	var (
		gateway  *payment.GatewayError
		invalid  *payment.InvalidOrderError
		breaker  *circuitbreaker.CallNotPermittedError
		bulkFull *bulkhead.BulkheadFullError
	)
	switch {
	case err == nil:
		return "none"
	case errors.As(err, &breaker):
		return "CallNotPermitted"
	case errors.As(err, &bulkFull):
		return "BulkheadFull"
	case errors.As(err, &gateway):
		return "GatewayError"
	case errors.As(err, &invalid):
		return "InvalidOrder"
	default:
		return fmt.Sprintf("%T", err)
	}
}

// must returns v, or stops the program when the configuration that built it was refused.
// The configurations are constants of this program, so an error here is a bug in it.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
