package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/examples/payment"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/retry"
)

// paymentService is the payment article's Spring PaymentService in Go: Resilience4j's annotation order
// Retry(CircuitBreaker(Bulkhead(charge))) with the PENDING fallback outermost, as
// levee.DefaultPipeline builds it.
type paymentService struct {
	client *payment.Client
	cb     *circuitbreaker.CircuitBreaker
	pay    *levee.Pipeline[string]
}

// paymentBreakerConfig is the payment article's application.yml for the breaker: a customer's invalid
// order says nothing about the gateway's health, so it is ignored.
func paymentBreakerConfig() circuitbreaker.Config {
	return circuitbreaker.Config{
		SlidingWindowType:                     circuitbreaker.CountBased,
		SlidingWindowSize:                     10,
		MinimumNumberOfCalls:                  5,
		FailureRateThreshold:                  50,
		WaitDurationInOpenState:               3 * time.Second,
		PermittedNumberOfCallsInHalfOpenState: 2,
		IgnoreErrors:                          []error{payment.ErrInvalidOrder},
	}
}

// paymentConfig describes the service's configuration in one line.
const paymentConfig = "breaker COUNT_BASED window 10, min 5, threshold 50, open wait 3s, half-open 2, " +
	"IgnoreErrors [ErrInvalidOrder]; retry MaxAttempts 3, ExponentialBackoff(100ms, 2), " +
	"RetryErrors [ErrGateway], IgnoreErrors [ErrInvalidOrder] (ErrCallNotPermitted: not retried, " +
	"levee's default); bulkhead 3; Fallback(Retry(CircuitBreaker(Bulkhead(charge))))"

// newPaymentService builds the service around a breaker configured by cbCfg.
func newPaymentService(client *payment.Client, cbCfg circuitbreaker.Config) *paymentService {
	ps := must(levee.NewPatterns("payment", levee.Configs{
		CircuitBreaker: &cbCfg,
		Retry: &retry.Config{
			MaxAttempts:      3,
			IntervalFunction: must(retry.ExponentialBackoff(100*time.Millisecond, 2, 0)),
			RetryErrors:      []error{payment.ErrGateway},
			IgnoreErrors:     []error{payment.ErrInvalidOrder},
		},
		Bulkhead: &bulkhead.Config{MaxConcurrentCalls: 3},
	}))
	pending := must(fallback.New("payment",
		// A customer's error is not hidden behind a fallback: it goes back as it is.
		fallback.OnError(payment.ErrInvalidOrder, fallback.FailFast[string](func(cause error) error { return cause })),
		// Anything else means the payment's fate is unknown: PENDING, never PAID.
		fallback.OnAny(answerPending),
	))
	return &paymentService{
		client: client,
		cb:     ps.CircuitBreaker,
		pay:    levee.DefaultPipeline(ps, pending),
	}
}

// orderKey is the context key under which Pay passes the order to the fallback: a handler
// sees only the context and the error, and the pipeline is shared by every order.
type orderKey struct{}

// Pay charges order through the pipeline. Outcome.Fallback tells a PENDING answer from a live
// receipt.
func (s *paymentService) Pay(ctx context.Context, order string) (string, fallback.Outcome, error) {
	ctx = context.WithValue(ctx, orderKey{}, order)
	return s.pay.ExecuteOutcome(ctx, func(ctx context.Context) (string, error) {
		return s.client.Charge(ctx, order)
	})
}

// answerPending is the payment article's pending(orderId, Throwable): "PENDING:<order> (<error kind>)".
func answerPending(ctx context.Context, err error) (string, error) {
	order, _ := ctx.Value(orderKey{}).(string)
	return fmt.Sprintf("PENDING:%s (%s)", order, errorKind(err)), nil
}

// describe renders what a caller of Pay got as the payment article's HTTP client shows it, marking
// whether it was a live answer or the fallback's.
func describe(answer string, out fallback.Outcome, err error) string {
	var invalid *payment.InvalidOrderError
	switch {
	case errors.As(err, &invalid):
		return fmt.Sprintf("Invalid order: %s (HTTP %d)", invalid.Order, invalid.Status)
	case err != nil:
		return "error: " + err.Error()
	case out.Fallback:
		return answer + " [fallback]"
	default:
		return answer + " [live]"
	}
}

// breakerLine renders the breaker's state and metrics as the payment article's actuator line does.
func breakerLine(cb *circuitbreaker.CircuitBreaker) string {
	m := cb.Metrics()
	return fmt.Sprintf("%s | failureRate %.1f%% | failed %d | notPermitted %d",
		m.State, m.FailureRate, m.NumberOfFailedCalls, m.NumberOfNotPermittedCalls)
}

// paymentScenarios runs scenarios A–D of the payment article ("Integrating with
// Spring Boot 3" and "Observing real behavior") against one payment service.
func paymentScenarios(e *env) *table {
	t := newTable("4. Payment service with a PENDING fallback, scenarios A–D", paymentConfig)
	e.reset(payment.ModeOK)
	s := newPaymentService(e.client, paymentBreakerConfig())
	ctx := context.Background()

	t.step("A. healthy gateway")
	got := describe(s.Pay(ctx, "DH001"))
	t.logf("%s", got)
	check(t, "answer", "PAID:DH001 [live]", got)

	t.step("B. invalid order (422): no retry, not counted")
	before := e.gw.Received()
	got = describe(s.Pay(ctx, "BAD1"))
	t.logf("%s  | gateway received %d call", got, e.gw.Received()-before)
	check(t, "answer", "Invalid order: BAD1 (HTTP 422)", got)
	check(t, "gateway received", 1, e.gw.Received()-before)
	check(t, "breaker buffered calls (A only)", 1, s.cb.Metrics().NumberOfBufferedCalls)

	t.step("C. broken gateway, 8 requests")
	e.gw.SetMode(payment.ModeFail)
	for i := 1; i <= 8; i++ {
		order := fmt.Sprintf("DH%03d", i)
		before = e.gw.Received()
		got := describe(s.Pay(ctx, order))
		more := e.gw.Received() - before
		t.logf("req %d -> %s | gateway received %d more calls", i, got, more)
		kind, calls := "CallNotPermitted", 0
		switch i {
		case 1:
			kind, calls = "GatewayError", 3
		case 2:
			calls = 1
		}
		check(t, fmt.Sprintf("req %d: answer, gateway calls", i),
			fmt.Sprintf("PENDING:%s (%s) [fallback] +%d", order, kind, calls),
			fmt.Sprintf("%s +%d", got, more))
	}
	line := breakerLine(s.cb)
	t.logf("breaker: %s", line)
	check(t, "breaker", "OPEN | failureRate 80.0% | failed 4 | notPermitted 7", line)

	t.step("D. wait 3.2 s, then the gateway recovers")
	time.Sleep(3200 * time.Millisecond)
	e.gw.SetMode(payment.ModeOK)
	for i := 1; i <= 3; i++ {
		got := describe(s.Pay(ctx, fmt.Sprintf("OK%d", i)))
		line := breakerLine(s.cb)
		t.logf("probe %d -> %s  breaker: %s", i, got, line)
		state := "CLOSED"
		if i == 1 {
			state = "HALF_OPEN"
		}
		check(t, fmt.Sprintf("probe %d", i), fmt.Sprintf("PAID:OK%d [live]", i), got)
		check(t, fmt.Sprintf("breaker after probe %d", i),
			state+" | failureRate -1.0% | failed 0 | notPermitted 0", line)
	}
	return t
}
