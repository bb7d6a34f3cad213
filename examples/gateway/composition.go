package main

import (
	"context"
	"fmt"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/examples/payment"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
)

// bulkheadPlacement is "Bulkhead inside versus outside the retry" of the
// composition article: with the bulkhead inside, its single permit is free while the
// retry waits; outside, the permit is held through both waits.
func bulkheadPlacement(e *env) *table {
	t := newTable("7. Bulkhead of one inside versus outside a retry",
		"bulkhead MaxConcurrentCalls 1; retry MaxAttempts 3, an interval function that records the "+
			"bulkhead's available permits and waits 1 ms; gateway fails (503)")
	for _, v := range []struct {
		label  string
		inside bool
		want   string
	}{
		{"Retry(Bulkhead(call))", true, "[1 1]"},
		{"Bulkhead(Retry(call))", false, "[0 0]"},
	} {
		e.reset(payment.ModeFail)
		t.step(v.label)
		bh := must(bulkhead.New("payment", bulkhead.Config{MaxConcurrentCalls: 1}))
		var available []int // the retry calls its interval function on the caller's goroutine
		rt := must(retry.New("payment", retry.Config{
			MaxAttempts: 3,
			IntervalFunction: func(int) time.Duration {
				available = append(available, bh.Metrics().AvailableConcurrentCalls)
				return time.Millisecond
			},
		}))
		pay := levee.Compose[string]().WithRetry(rt).WithBulkhead(bh)
		if v.inside {
			pay = levee.Compose[string]().WithBulkhead(bh).WithRetry(rt)
		}
		_, err := pay.Execute(context.Background(), func(ctx context.Context) (string, error) {
			return e.client.Charge(ctx, "DH001")
		})
		t.logf("available permits during the backoff waits: %v; gateway received %d; error: %v",
			available, e.gw.Received(), err)
		check(t, "available permits during the waits", v.want, fmt.Sprint(available))
		check(t, "gateway received", 3, e.gw.Received())
	}
	return t
}

// rateLimiterPlacement is "RateLimiter inside the Retry" of the composition article: inside,
// every attempt takes a permission (three for one failing request); outside, the whole
// retried request takes one.
func rateLimiterPlacement(e *env) *table {
	t := newTable("8. Rate limiter inside versus outside a retry",
		"rate limiter LimitForPeriod 10, LimitRefreshPeriod 1m (never refuses here); "+
			"retry MaxAttempts 3, WaitDuration 1ms; gateway fails (503)")
	for _, v := range []struct {
		label   string
		inside  bool
		permits int
	}{
		{"Retry(RateLimiter(call))", true, 3},
		{"RateLimiter(Retry(call))", false, 1},
	} {
		e.reset(payment.ModeFail)
		t.step(v.label)
		rl := must(ratelimiter.New("payment", ratelimiter.Config{
			LimitForPeriod:     10,
			LimitRefreshPeriod: time.Minute,
		}))
		acquired := 0 // events are published on the caller's goroutine
		unsubscribe := rl.Subscribe(func(ev ratelimiter.Event) {
			if ev.Type == ratelimiter.EventSuccessfulAcquire {
				acquired += ev.Permits
			}
		})
		rt := must(retry.New("payment", retry.Config{MaxAttempts: 3, WaitDuration: time.Millisecond}))
		pay := levee.Compose[string]().WithRetry(rt).WithRateLimiter(rl)
		if v.inside {
			pay = levee.Compose[string]().WithRateLimiter(rl).WithRetry(rt)
		}
		_, err := pay.Execute(context.Background(), func(ctx context.Context) (string, error) {
			return e.client.Charge(ctx, "DH001")
		})
		unsubscribe()
		left := rl.Metrics().AvailablePermissions
		t.logf("permits taken %d, left in the cycle %d; gateway received %d; error: %v",
			acquired, left, e.gw.Received(), err)
		check(t, "permits taken (SUCCESSFUL_ACQUIRE events)", v.permits, acquired)
		check(t, "permits left in the cycle (metrics)", 10-v.permits, left)
		check(t, "gateway received", 3, e.gw.Received())
	}
	return t
}

// retryThroughOpenBreaker is "Retrying through an open breaker" of the
// composition article: a retry of four attempts meets a breaker of window 2 that opens
// after the second, with a cached-price fallback on the retry.
func retryThroughOpenBreaker(e *env) *table {
	t := newTable("9. Retrying through an open breaker",
		"retry MaxAttempts 4, WaitDuration 1ms; breaker COUNT_BASED window 2, min 2, threshold 50; "+
			"Fallback(Retry(CircuitBreaker(price))) serving the last known price; gateway fails (503)")
	const sku = "book-1"
	cached := fmt.Sprintf("%d cents [fallback]", payment.ListPrice(sku))

	// counts are what one request costs: gateway calls, attempts the breaker rejected, attempts.
	type counts struct{ backend, rejected, attempts int64 }
	variants := []struct {
		label           string
		retryRejections []error
		requests        []counts
	}{
		{"[Resilience4j default] rejections retried", retryRejections, []counts{{2, 2, 4}, {0, 4, 4}}},
		{"[levee default] rejections not retried", nil, []counts{{2, 1, 3}}},
	}
	for _, v := range variants {
		e.reset(payment.ModeFail)
		t.step(v.label)
		cb := must(circuitbreaker.New("pricing", circuitbreaker.Config{
			SlidingWindowType:    circuitbreaker.CountBased,
			SlidingWindowSize:    2,
			MinimumNumberOfCalls: 2,
		}))
		rt := must(retry.New("pricing", retry.Config{
			MaxAttempts:     4,
			WaitDuration:    time.Millisecond,
			RetryRejections: v.retryRejections,
		}))
		var prices fallback.LastKnown[string, int64]
		prices.Put(sku, payment.ListPrice(sku)) // what an earlier successful call left
		stale := must(fallback.New("pricing", fallback.OnAny(prices.Serve(nil))))
		guard := levee.Compose[int64]().WithCircuitBreaker(cb).WithRetry(rt).WithFallback(stale)

		totals := func() counts {
			return counts{e.gw.Received(), int64(cb.Metrics().NumberOfNotPermittedCalls), rt.Metrics().NumberOfTotalCalls}
		}
		for i, want := range v.requests {
			before := totals()
			cents, out, err := guard.ExecuteOutcome(prices.WithKey(context.Background(), sku), func(ctx context.Context) (int64, error) {
				return e.client.Price(ctx, sku)
			})
			after := totals()
			got := counts{after.backend - before.backend, after.rejected - before.rejected, after.attempts - before.attempts}
			answer := fmt.Sprintf("%d cents [live]", cents)
			if out.Fallback {
				answer = fmt.Sprintf("%d cents [fallback]", cents)
			}
			if err != nil {
				answer = "error: " + err.Error()
			}
			t.logf("request %d: backend called %d, breaker rejected %d, attempts %d -> %s; fallback's cause: %v",
				i+1, got.backend, got.rejected, got.attempts, answer, out.Cause)
			name := fmt.Sprintf("request %d: ", i+1)
			check(t, name+"backend calls", want.backend, got.backend)
			check(t, name+"attempts rejected by the breaker", want.rejected, got.rejected)
			check(t, name+"attempts made", want.attempts, got.attempts)
			check(t, name+"answer", cached, answer)
			check(t, name+"fallback answered", "CallNotPermitted", errorKind(out.Cause))
		}
	}
	return t
}
