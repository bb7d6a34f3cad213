package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/levee-go/levee/examples/payment"
	"github.com/levee-go/levee/retry"
)

// retryBackoff is section 2 of the payment article: three attempts with an
// exponential backoff of 100 ms ×2 reach the gateway at about 0, 100 and 300 ms.
func retryBackoff(e *env) *table {
	t := newTable("2. Retry: 3 attempts, backoff 100ms ×2, with the time of each attempt",
		"MaxAttempts 3, ExponentialBackoff(100ms, 2), RetryErrors [payment.ErrGateway]; gateway fails (503)")
	e.reset(payment.ModeFail)

	rt := must(retry.New("payment", retry.Config{
		MaxAttempts:      3,
		IntervalFunction: must(retry.ExponentialBackoff(100*time.Millisecond, 2, 0)),
		RetryErrors:      []error{payment.ErrGateway},
	}))

	// The gateway notes when each attempt really arrived; its hook runs on the server's
	// goroutines, hence the lock.
	var (
		mu       sync.Mutex
		arrivals []time.Time
	)
	e.gw.OnRequest(func(r payment.RequestInfo) {
		mu.Lock()
		arrivals = append(arrivals, r.Arrived)
		mu.Unlock()
	})
	defer e.gw.OnRequest(nil)

	start := time.Now() // the clock starts before the first call, as in the article
	_, err := retry.Execute(context.Background(), rt, func(ctx context.Context) (string, error) {
		return e.client.Charge(ctx, "DH001")
	})
	e.waitIdle()

	mu.Lock()
	defer mu.Unlock()
	for i, at := range arrivals {
		t.logf("real call #%d at t=%s", i+1, ms(at.Sub(start)))
	}
	result := fmt.Sprintf("unexpected: %v", err)
	var gwErr *payment.GatewayError
	if errors.Is(err, retry.ErrMaxRetriesExceeded) && errors.As(err, &gwErr) {
		result = fmt.Sprintf("failed after %d real calls: %v", e.gw.Received(), gwErr)
	}
	t.logf("Result: %s", result)
	t.logf("error returned: %v", err)

	gap := func(i int) time.Duration { // between call i and call i+1; -1 when one is missing
		if i < len(arrivals) {
			return arrivals[i].Sub(arrivals[i-1])
		}
		return -1
	}
	check(t, "real calls", 3, len(arrivals))
	within(t, "gap call 1 → call 2", gap(1), 100*time.Millisecond, 160*time.Millisecond)
	within(t, "gap call 2 → call 3", gap(2), 200*time.Millisecond, 260*time.Millisecond)
	check(t, "result", "failed after 3 real calls: gateway 503", result)
	return t
}
