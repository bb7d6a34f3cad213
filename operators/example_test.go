package operators_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/reactivex/rxgo/v2"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/operators"
	"github.com/levee-go/levee/retry"
)

var errUnavailable = errors.New("pricing unavailable")

// Each order is priced through the pipeline; the one the pricing service fails on is answered
// from the cache and marked as such, and the stream goes on.
func ExampleMapResults() {
	cache := map[string]int{"book": 1999}
	cached, _ := fallback.New("prices", fallback.OnError(errUnavailable, func(ctx context.Context, err error) (int, error) {
		return cache["book"], nil
	}))
	breaker, _ := circuitbreaker.New("pricing", circuitbreaker.Config{})
	pricing := levee.Compose[int]().WithCircuitBreaker(breaker).WithFallback(cached)

	price := func(ctx context.Context, sku string) (int, error) {
		if sku == "book" {
			return 0, errUnavailable
		}
		return len(sku) * 100, nil
	}
	priced, err := operators.MapResults(pricing, price, operators.Concurrency(2))
	if err != nil {
		panic(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for it := range priced(rxgo.Just("pen", "book", "lamp")()).Observe(rxgo.WithContext(ctx)) {
		r := it.V.(operators.Result[string, int])
		fmt.Println(r.Index, r.In, r.Value, "fallback:", r.Fallback)
	}
	// Output:
	// 0 pen 300 fallback: false
	// 1 book 1999 fallback: true
	// 2 lamp 400 fallback: false
}

// Map emits values and error items; Collect reads them and stops at the first error.
func ExampleMap() {
	double, _ := operators.Map(nil, func(ctx context.Context, v int) (int, error) {
		if v == 3 {
			return 0, fmt.Errorf("cannot double %d", v)
		}
		return 2 * v, nil
	})
	// A failed element is an error item among the values, as a failed Result in stream.Map:
	// the subscription goes on past it.
	for it := range double(rxgo.Just(1, 2, 3, 4)()).Observe() {
		fmt.Println(it.V, it.E)
	}
	// With StopOnError it ends there, as rxgo's own operators and levee's Collect stop.
	stopping, _ := operators.Map(nil, func(ctx context.Context, v int) (int, error) {
		if v == 3 {
			return 0, fmt.Errorf("cannot double %d", v)
		}
		return 2 * v, nil
	}, operators.StopOnError())
	got, err := operators.Collect[int](context.Background(), stopping(rxgo.Just(1, 2, 3, 4)()))
	fmt.Println(got, err)
	// Output:
	// 2 <nil>
	// 4 <nil>
	// <nil> cannot double 3
	// 8 <nil>
	// [2 4] stream: stopped at element 2 (3): cannot double 3
}

// Retry builds a fresh stream for each attempt: the feed fails twice, then works. The items
// of the failed attempts were already delivered, as with any Rx retry.
func ExampleRetry() {
	rt, _ := retry.New("feed", retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
	attempt := 0
	feed := func(ctx context.Context) (rxgo.Observable, error) {
		attempt++
		if attempt < 3 {
			return rxgo.Just(fmt.Sprint("partial-", attempt), errors.New("connection reset"))(), nil
		}
		return rxgo.Just("tick-1", "tick-2")(), nil
	}
	got, err := operators.Collect[string](context.Background(), operators.Retry(rt, feed))
	fmt.Println(got, err)
	// Output:
	// [partial-1 partial-2 tick-1 tick-2] <nil>
}

// Guard runs a whole stream under the patterns; building it fails, and the fallback answers
// with a cached stream instead.
func ExampleGuard() {
	breaker, _ := circuitbreaker.New("feed", circuitbreaker.Config{})
	stale, _ := fallback.New("feed", fallback.OnAny(func(ctx context.Context, err error) (rxgo.Observable, error) {
		return rxgo.Just("cached-1", "cached-2")(), nil
	}))
	open := func(ctx context.Context) (rxgo.Observable, error) {
		return nil, errors.New("dial tcp: connection refused")
	}
	obs, err := operators.Guard(levee.Patterns{CircuitBreaker: breaker}, stale, open)
	if err != nil {
		panic(err)
	}
	got, err := operators.Collect[string](context.Background(), obs)
	fmt.Println(got, err)
	fmt.Println("failures recorded:", breaker.Metrics().NumberOfFailedCalls)
	// Output:
	// [cached-1 cached-2] <nil>
	// failures recorded: 1
}

// First takes one value and cancels the subscription, so nothing upstream is left blocked.
func ExampleFirst() {
	v, err := operators.First[int](context.Background(), rxgo.Range(1, 1_000_000))
	fmt.Println(v, err)
	// Output:
	// 1 <nil>
}
