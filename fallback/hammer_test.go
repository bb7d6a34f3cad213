package fallback_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/fallback"
)

// 64 goroutines share one Fallback and one subscriber; every use must be counted exactly once,
// in the metrics and in the events, and every caller must get its own answer.
func TestHammer(t *testing.T) {
	const goroutines, perGoroutine = 64, 6 * 32 // each of the six cases 32 times per goroutine
	var prices fallback.LastKnown[int, int]
	f := labelled(t,
		fallback.OnType(func(_ context.Context, e *GatewayError) (int, error) { return e.Status, nil }),
		fallback.OnError(errNotFound, func(context.Context, error) (int, error) { return 0, errPriceUnavailable }),
		fallback.OnError(errOther, prices.Serve(func(v int) int { return -v })),
		fallback.OnResult(func(v int) bool { return v < 0 }, func(_ context.Context, v int) (int, error) { return -v, nil }),
	)
	var events [4]atomic.Int64
	defer f.Subscribe(func(e fallback.Event) { events[e.Type].Add(1) })()

	var wrong atomic.Int64
	check := func(ok bool) {
		if !ok {
			wrong.Add(1)
		}
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perGoroutine {
				key := g*perGoroutine + i
				ctx := prices.WithKey(context.Background(), key)
				switch i % 6 {
				case 0: // live, remembered
					v, out, err := fallback.ExecuteOutcome(ctx, f, func(context.Context) (int, error) { prices.Put(key, key); return key, nil })
					check(err == nil && v == key && !out.Fallback)
				case 1: // answered by the type handler, with this caller's own error
					v, err := fallback.Execute(ctx, f, failing[int](fmt.Errorf("x: %w", &GatewayError{Status: key})))
					check(err == nil && v == key)
				case 2: // no last known value for this key: failed
					_, err := fallback.Execute(ctx, f, failing[int](errOther))
					check(errorsIs(err, fallback.ErrNoLastKnown) && errorsIs(err, errOther))
				case 3: // the handler fails
					_, err := fallback.Execute(ctx, f, failing[int](errNotFound))
					check(errorsIs(err, errPriceUnavailable) && errorsIs(err, errNotFound))
				case 4: // unhandled
					_, err := fallback.Execute(ctx, f, failing[int](errBoom))
					check(err == errBoom)
				case 5: // a result replaced, then the value case 0 remembered served stale
					v, out, err := fallback.ExecuteOutcome(ctx, f, func(context.Context) (int, error) { return -key, nil })
					check(err == nil && v == key && out.Fallback)
					v, err = fallback.Execute(prices.WithKey(context.Background(), key-5), f, failing[int](errOther))
					check(err == nil && v == -(key-5))
				}
			}
		})
	}
	wg.Wait()

	const each = goroutines * perGoroutine / 6
	assert.Zero(t, wrong.Load(), "callers that got a wrong answer")
	assert.Equal(t, fallback.Metrics{
		NumberOfFallbackAnswers: 3 * each, // cases 1 and 5 (twice)
		NumberOfFailedFallbacks: 2 * each, // cases 2 and 3
		NumberOfUnhandledErrors: each,     // case 4
	}, f.Metrics())
	assert.Equal(t, int64(3*each), events[fallback.EventAnswered].Load())
	assert.Equal(t, int64(2*each), events[fallback.EventFailed].Load())
	assert.Equal(t, int64(each), events[fallback.EventUnhandled].Load())
	assert.Equal(t, each, prices.Len())
}
