package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/examples/payment"
)

// breakerLifecycle is section 1 of the payment article: eight calls to a failing
// gateway open the breaker after the fifth, the gateway recovers, and two probes after the open
// wait close it again.
func breakerLifecycle(e *env) *table {
	t := newTable("1. Circuit breaker: CLOSED → OPEN → HALF_OPEN → CLOSED",
		"COUNT_BASED window 10, MinimumNumberOfCalls 5, FailureRateThreshold 50, "+
			"WaitDurationInOpenState 1s, PermittedNumberOfCallsInHalfOpenState 2; gateway fails (503)")
	e.reset(payment.ModeFail)

	cb := must(circuitbreaker.New("payment", circuitbreaker.Config{
		SlidingWindowType:                     circuitbreaker.CountBased,
		SlidingWindowSize:                     10,
		MinimumNumberOfCalls:                  5,
		FailureRateThreshold:                  50,
		WaitDurationInOpenState:               time.Second,
		PermittedNumberOfCallsInHalfOpenState: 2,
	}))
	var transitions []string
	unsubscribe := cb.Subscribe(func(ev circuitbreaker.Event) {
		if ev.Type == circuitbreaker.EventStateTransition {
			t.logf("   [event] %s", ev)
			transitions = append(transitions, ev.From.String()+"→"+ev.To.String())
		}
	})
	defer unsubscribe()
	pay := func(ctx context.Context) (string, error) {
		return circuitbreaker.Execute(ctx, cb, func(ctx context.Context) (string, error) {
			return e.client.Charge(ctx, "DH")
		})
	}
	ctx := context.Background()

	t.step("8 calls to the failing gateway")
	var outcomes, states []string
	for i := 1; i <= 8; i++ {
		start := time.Now()
		_, err := pay(ctx)
		took := time.Since(start)
		outcome := "unexpected: " + fmt.Sprint(err)
		switch {
		case errors.Is(err, circuitbreaker.ErrCallNotPermitted):
			outcome = "blocked (ErrCallNotPermitted)"
		case errors.Is(err, payment.ErrGateway):
			outcome = "error: " + err.Error()
		}
		outcomes = append(outcomes, outcome)
		states = append(states, cb.State().String())
		t.logf("call %d -> %-30s state=%-9s real gateway calls=%d  took %.1f µs",
			i, outcome, cb.State(), e.gw.Received(), float64(took.Nanoseconds())/1000)
	}
	m := cb.Metrics()
	t.logf("failureRate=%.0f%%  failed=%d  notPermitted=%d", m.FailureRate, m.NumberOfFailedCalls, m.NumberOfNotPermittedCalls)
	check(t, "outcomes of calls 1–8", "error: gateway 503 ×5, blocked (ErrCallNotPermitted) ×3", runs(outcomes))
	check(t, "states after calls 1–8", "CLOSED ×4, OPEN ×4", runs(states))
	check(t, "gateway received", 5, e.gw.Received())
	check(t, "failure rate", "100%", fmt.Sprintf("%.0f%%", m.FailureRate))
	check(t, "failed calls", 5, m.NumberOfFailedCalls)
	check(t, "not permitted calls", 3, m.NumberOfNotPermittedCalls)

	t.step("gateway recovers, wait 1.1 s, three probes")
	e.gw.SetMode(payment.ModeOK)
	time.Sleep(1100 * time.Millisecond)
	for i := 1; i <= 3; i++ {
		receipt, err := pay(ctx)
		got := fmt.Sprintf("%s state=%s", receipt, cb.State())
		if err != nil {
			got = fmt.Sprintf("error %v state=%s", err, cb.State())
		}
		t.logf("probe %d -> %s", i, got)
		want := "PAID:DH state=CLOSED"
		if i == 1 {
			want = "PAID:DH state=HALF_OPEN"
		}
		check(t, fmt.Sprintf("probe %d", i), want, got)
	}
	check(t, "state transitions (events)", "CLOSED→OPEN, OPEN→HALF_OPEN, HALF_OPEN→CLOSED",
		strings.Join(transitions, ", "))
	return t
}
