package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/examples/payment"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

// timeLimiterInRetry is "TimeLimiter inside the retry" of the composition article: against
// a gateway that never answers, each attempt gets its own deadline, ends at it with ErrTimeout,
// and has its request cancelled, which the gateway sees.
func timeLimiterInRetry(e *env) *table {
	t := newTable("10. Time limiter inside a retry, gateway hangs",
		"time limiter TimeoutDuration 200ms (cancels the attempt); retry MaxAttempts 3, WaitDuration 10ms; "+
			"Retry(TimeLimiter(call)); gateway hangs")
	e.reset(payment.ModeHang)

	tl := must(timelimiter.New("payment", timelimiter.Config{TimeoutDuration: 200 * time.Millisecond}))
	var timeouts []time.Duration // events are published on the caller's goroutine
	unsubscribe := tl.Subscribe(func(ev timelimiter.Event) {
		t.logf("[event] %s after %s: %v", ev.Type, ms(ev.Duration), ev.Err)
		if ev.Type == timelimiter.EventTimeout {
			timeouts = append(timeouts, ev.Duration)
		}
	})
	defer unsubscribe()
	rt := must(retry.New("payment", retry.Config{MaxAttempts: 3, WaitDuration: 10 * time.Millisecond}))
	pay := levee.Compose[string]().WithTimeLimiter(tl).WithRetry(rt)

	start := time.Now()
	_, err := pay.Execute(context.Background(), func(ctx context.Context) (string, error) {
		return e.client.Charge(ctx, "DH001")
	})
	took := time.Since(start)
	e.waitIdle() // the gateway notices each cancellation a moment after the caller has moved on
	t.logf("caller's error after %s: %v", ms(took), err)
	t.logf("gateway received %d, cancelled by client %d", e.gw.Received(), e.gw.CancelledByClient())

	check(t, "attempts ended by ErrTimeout", 3, len(timeouts))
	for i := range 3 {
		d := time.Duration(-1)
		if i < len(timeouts) {
			d = timeouts[i]
		}
		within(t, fmt.Sprintf("attempt %d ended at its deadline", i+1), d, 200*time.Millisecond, 260*time.Millisecond)
	}
	check(t, "gateway received", 3, e.gw.Received())
	check(t, "gateway saw the request's context end (CancelledByClient)", 3, e.gw.CancelledByClient())
	check(t, "caller's error matches timelimiter.ErrTimeout", true, errors.Is(err, timelimiter.ErrTimeout))
	check(t, "caller's error matches context.DeadlineExceeded", true, errors.Is(err, context.DeadlineExceeded))
	return t
}
