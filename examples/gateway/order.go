package main

import (
	"context"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/examples/payment"
	"github.com/levee-go/levee/retry"
)

// retryRejections is the RetryRejections list that reproduces Resilience4j's default of
// retrying every exception, CallNotPermittedException included: levee retries its own
// rejections only when they are listed there.
var retryRejections = []error{circuitbreaker.ErrCallNotPermitted}

// compositionOrder is section 4 of the payment article: six requests to a
// broken gateway through Retry(CircuitBreaker), CircuitBreaker(Retry), and Retry(CircuitBreaker)
// with the breaker's rejections not retried.
func compositionOrder(e *env) *table {
	t := newTable("3. Composition order, gateway completely broken, 6 user requests",
		"retry MaxAttempts 3, WaitDuration 10ms; breaker COUNT_BASED window 6 "+
			"(MinimumNumberOfCalls 100 capped to the window), FailureRateThreshold 50")

	rows := []struct {
		label             string
		retryRejections   []error
		retryOutside      bool
		received          int64
		recorded, blocked int
	}{
		{"Retry(CircuitBreaker), rejections retried", retryRejections, true, 6, 6, 12},
		{"CircuitBreaker(Retry)", nil, false, 18, 6, 0},
		{"Retry(CircuitBreaker), levee's default", nil, true, 6, 6, 4},
	}
	for _, row := range rows {
		e.reset(payment.ModeFail)
		t.step(row.label)
		cb := must(circuitbreaker.New("payment", circuitbreaker.Config{
			SlidingWindowType: circuitbreaker.CountBased,
			SlidingWindowSize: 6,
		}))
		rt := must(retry.New("payment", retry.Config{
			MaxAttempts:     3,
			WaitDuration:    10 * time.Millisecond,
			RetryRejections: row.retryRejections,
		}))
		pay := levee.Compose[string]().WithRetry(rt).WithCircuitBreaker(cb) // each With wraps what is before it
		if row.retryOutside {
			pay = levee.Compose[string]().WithCircuitBreaker(cb).WithRetry(rt)
		}
		charge := func(ctx context.Context) (string, error) { return e.client.Charge(ctx, "DH001") }
		for range 6 {
			_, _ = pay.Execute(context.Background(), charge) // every request fails; the figures are the counters
		}
		m := cb.Metrics()
		t.logf("gateway received %2d | breaker recorded %d failures, blocked %2d | final: %s",
			e.gw.Received(), m.NumberOfFailedCalls, m.NumberOfNotPermittedCalls, m.State)
		check(t, "gateway received", row.received, e.gw.Received())
		check(t, "breaker recorded failures", row.recorded, m.NumberOfFailedCalls)
		check(t, "breaker blocked (NumberOfNotPermittedCalls)", row.blocked, m.NumberOfNotPermittedCalls)
		check(t, "final state", circuitbreaker.Open, m.State)
	}
	t.logf("levee's default is the third row: Retry does not retry ErrCallNotPermitted unless " +
		"RetryRejections lists it, so requests meeting the open breaker fail at once.")
	return t
}
