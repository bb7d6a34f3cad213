package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/examples/payment"
	"github.com/levee-go/levee/fallback"
)

// concurrently runs call(i) for i in [0, n) on n goroutines released together, so that every
// call competes for the same permits, and returns once all have returned.
func concurrently(n int, call func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			call(i)
		})
	}
	close(start)
	wg.Wait()
}

// bulkheadLimit is section 3 of the payment article: ten concurrent calls of
// 300 ms through a bulkhead of three; seven are refused at once and never reach the gateway.
func bulkheadLimit(e *env) *table {
	t := newTable("5. Bulkhead: at most 3 concurrent calls, 10 at once, 300 ms per call",
		"MaxConcurrentCalls 3, MaxWaitDuration 0; gateway slow, 300 ms per call")
	e.reset(payment.ModeSlow)
	e.gw.SetLatency(300 * time.Millisecond)
	bh := must(bulkhead.New("payment", bulkhead.Config{MaxConcurrentCalls: 3}))

	errs := make([]error, 10)
	took := make([]time.Duration, 10)
	concurrently(10, func(i int) {
		start := time.Now()
		_, errs[i] = bulkhead.Execute(context.Background(), bh, func(ctx context.Context) (string, error) {
			return e.client.Charge(ctx, fmt.Sprintf("BH%02d", i+1))
		})
		took[i] = time.Since(start)
	})

	succeeded, rejected := 0, 0
	slowestRejection := time.Duration(-1)
	for i, err := range errs {
		switch {
		case err == nil:
			succeeded++
		case errors.Is(err, bulkhead.ErrBulkheadFull):
			rejected++
			slowestRejection = max(slowestRejection, took[i])
		default:
			t.logf("call %d: unexpected error %v", i+1, err)
		}
	}
	t.logf("succeeded=%d  rejected immediately (ErrBulkheadFull)=%d  gateway actually received=%d  (max in flight %d)",
		succeeded, rejected, e.gw.Received(), e.gw.MaxInFlight())
	check(t, "succeeded", 3, succeeded)
	check(t, "rejected (ErrBulkheadFull)", 7, rejected)
	within(t, "slowest rejection", slowestRejection, 0, 50*time.Millisecond)
	check(t, "gateway received", 3, e.gw.Received())
	return t
}

// bulkheadTrap is scenario E of the payment article ("The trap: the Bulkhead pushes the Circuit
// Breaker open"): ten concurrent payments to a 400 ms gateway through the payment service, once
// with a breaker that records the bulkhead's rejections (Resilience4j's default, one
// RecordRejections line away) and once with levee's default, which ignores them.
func bulkheadTrap(e *env) *table {
	t := newTable("6. Scenario E: the bulkhead pushes the breaker open",
		"the payment service of 4, 10 concurrent requests; gateway slow, 400 ms per call")

	resilience4jDefault := paymentBreakerConfig()
	resilience4jDefault.RecordRejections = []error{bulkhead.ErrBulkheadFull}
	variants := []struct {
		label           string
		cfg             circuitbreaker.Config
		recordsBulkFull bool
	}{
		{"[Resilience4j default] RecordRejections [ErrBulkheadFull]", resilience4jDefault, true},
		{"[levee default] bulkhead rejections not recorded", paymentBreakerConfig(), false},
	}
	for _, v := range variants {
		e.reset(payment.ModeSlow)
		e.gw.SetLatency(400 * time.Millisecond)
		t.step(v.label)
		s := newPaymentService(e.client, v.cfg)
		// A rejection that reaches the breaker after another one opened it was permitted by the
		// CLOSED period: levee publishes it as a late ERROR and records it nowhere, where
		// Resilience4j records it in OPEN's metrics. Counting those keeps the article's total.
		var lateFailures atomic.Int64
		unsubscribe := s.cb.Subscribe(func(ev circuitbreaker.Event) {
			if ev.Late && ev.Type == circuitbreaker.EventError {
				lateFailures.Add(1)
			}
		})

		type answer struct {
			receipt string
			out     fallback.Outcome
			err     error
		}
		answers := make([]answer, 10)
		concurrently(10, func(i int) {
			a := &answers[i]
			a.receipt, a.out, a.err = s.Pay(context.Background(), fmt.Sprintf("SL%d", i+1))
		})
		paid, pending := 0, 0
		var causes []string
		for _, a := range answers {
			switch {
			case a.err == nil && !a.out.Fallback && strings.HasPrefix(a.receipt, "PAID:"):
				paid++
			case a.err == nil && a.out.Fallback && strings.HasPrefix(a.receipt, "PENDING:"):
				pending++
				causes = append(causes, errorKind(a.out.Cause))
			default:
				t.logf("unexpected answer: %s", describe(a.receipt, a.out, a.err))
			}
		}
		unsubscribe()
		m := s.cb.Metrics()
		t.logf("%d PAID:SLn", paid)
		t.logf("%d PENDING:SLn (%s)", pending, split(causes))
		t.logf("gateway actually received: %d calls (max in flight %d)", e.gw.Received(), e.gw.MaxInFlight())
		t.logf("breaker: %s", breakerLine(s.cb))

		check(t, "PAID", 3, paid)
		check(t, "PENDING", 7, pending)
		atMost(t, "gateway received", e.gw.Received(), 3)
		atMost(t, "gateway max in flight", e.gw.MaxInFlight(), 3)
		if v.recordsBulkFull {
			check(t, "breaker state", circuitbreaker.Open, m.State)
			t.logf("late failures (rejections that reached the breaker once it was OPEN): %d", lateFailures.Load())
			check(t, "failed + notPermitted + late", 7, m.NumberOfFailedCalls+m.NumberOfNotPermittedCalls+int(lateFailures.Load()))
		} else {
			check(t, "breaker state", circuitbreaker.Closed, m.State)
			check(t, "failed", 0, m.NumberOfFailedCalls)
			check(t, "notPermitted", 0, m.NumberOfNotPermittedCalls)
		}
	}
	t.logf("the split between bulkhead and breaker rejections varies with arrival order; the totals do not")
	return t
}

// split counts the fallback causes: "BulkheadFull ×5, CallNotPermitted ×2".
func split(causes []string) string {
	count := map[string]int{}
	for _, c := range causes {
		count[c]++
	}
	var parts []string
	for c, n := range count {
		parts = append(parts, fmt.Sprintf("%s ×%d", c, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
