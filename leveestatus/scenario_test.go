package leveestatus_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveestatus"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

// scenario is a registry with one instance of every pattern, a handler over it, and calls
// made through each after the handler subscribed. It must be built inside a synctest bubble:
// the clock starts at 2000-01-01T00:00:00Z and moves only where a call sleeps.
type scenario struct {
	reg     *registry.Registry
	h       *leveestatus.Handler
	payment *circuitbreaker.CircuitBreaker
	stock   *circuitbreaker.CircuitBreaker
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

var (
	errDown = errors.New("stock down")
	errPay  = errors.New("card declined")
)

func newScenario(t *testing.T, opts ...leveestatus.Option) *scenario {
	t.Helper()
	ctx := context.Background()
	reg := registry.New()
	// payment: window 10, at least 5 calls, opens at 70%: 8 calls with 5 failures leave it
	// CLOSED at 62.5%, one failure slow (2s > 1s) makes the slow-call rate 12.5%.
	payment := must(circuitbreaker.New("payment", circuitbreaker.Config{
		SlidingWindowSize: 10, MinimumNumberOfCalls: 5, FailureRateThreshold: 70,
		SlowCallDurationThreshold: time.Second,
	}))
	// stock: window 4 at 50%: 4 failures open it; the fifth call is not permitted.
	stock := must(circuitbreaker.New("stock", circuitbreaker.Config{
		SlidingWindowSize: 4, MinimumNumberOfCalls: 4, FailureRateThreshold: 50,
		WaitDurationInOpenState: time.Minute,
	}))
	rt := must(retry.New("payment", retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait}))
	bh := must(bulkhead.New("db", bulkhead.Config{MaxConcurrentCalls: 2}))
	pool := must(async.NewWorkerPool("jobs", async.WorkerPoolConfig{CoreThreadPoolSize: 1, MaxThreadPoolSize: 1, QueueCapacity: 2}))
	t.Cleanup(func() { _ = pool.Close() })
	rl := must(ratelimiter.New("api", ratelimiter.Config{LimitForPeriod: 10, LimitRefreshPeriod: time.Second, TimeoutDuration: ratelimiter.NoWait}))
	tl := must(timelimiter.New("quote", timelimiter.Config{TimeoutDuration: time.Second}))
	for _, err := range []error{
		reg.AddCircuitBreaker(payment), reg.AddCircuitBreaker(stock), reg.AddRetry(rt),
		reg.AddBulkhead(bh), reg.AddWorkerPool(pool), reg.AddRateLimiter(rl), reg.AddTimeLimiter(tl),
	} {
		require.NoError(t, err)
	}
	h, err := leveestatus.NewHandler(reg, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Close() })

	// At 00:00:00: stock fails 4 times and opens, then refuses one call.
	for range 5 {
		_, _ = circuitbreaker.Execute(ctx, stock, func(context.Context) (int, error) { return 0, errDown })
	}
	// payment: F S F S F S F(slow, 2s) F; the slow call moves the clock to 00:00:02.
	for i, fail := range []bool{true, false, true, false, true, false, true, true} {
		_, _ = circuitbreaker.Execute(ctx, payment, func(context.Context) (int, error) {
			if i == 6 {
				time.Sleep(2 * time.Second)
			}
			if fail {
				return 0, errPay
			}
			return 1, nil
		})
	}
	// At 00:00:02: the retry succeeds on its third attempt, then at once, then fails 3 times.
	attempt := 0
	_, _ = retry.Execute(ctx, rt, func(context.Context) (int, error) {
		attempt++
		if attempt < 3 {
			return 0, errors.New("timeout " + string(rune('0'+attempt)))
		}
		return 1, nil
	})
	_, _ = retry.Execute(ctx, rt, func(context.Context) (int, error) { return 1, nil })
	_, _ = retry.Execute(ctx, rt, func(context.Context) (int, error) { return 0, errPay })
	// The bulkhead and the rate limiter each let calls through.
	_, _ = bulkhead.Execute(ctx, bh, func(context.Context) (int, error) { return 1, nil })
	for range 3 {
		_, _ = ratelimiter.Execute(ctx, rl, func(context.Context) (int, error) { return 1, nil })
	}
	// The time limiter: one call in time, one that times out at 00:00:03.
	_, _ = timelimiter.Execute(ctx, tl, func(context.Context) (int, error) { return 1, nil })
	_, _ = timelimiter.Execute(ctx, tl, func(ctx context.Context) (int, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	})
	return &scenario{reg: reg, h: h, payment: payment, stock: stock}
}

// do sends a request to h and returns the status, the Content-Type and the body.
func do(t *testing.T, h http.Handler, method, path, body string) (int, string, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, rd))
	return rec.Code, rec.Header().Get("Content-Type"), rec.Body.String()
}

// get asks h for path and requires a 200 JSON answer.
func get(t *testing.T, h http.Handler, path string) string {
	t.Helper()
	code, ct, body := do(t, h, http.MethodGet, path, "")
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, "application/json", ct)
	return body
}
