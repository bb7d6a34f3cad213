package levee_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
)

var errGateway = errors.New("gateway 503")

// A payment service: Retry outside the CircuitBreaker, and a fallback outermost
// that answers PENDING rather than PAID when the gateway cannot be reached. After the breaker
// opens, the retry does not retry its rejections (levee's default) and the fallback answers at
// once.
func ExampleDefaultPipeline() {
	cb, _ := circuitbreaker.New("payment", circuitbreaker.Config{SlidingWindowSize: 10, MinimumNumberOfCalls: 5})
	rt, _ := retry.New("payment", retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
	pending, _ := fallback.New("payment", fallback.OnAny(func(ctx context.Context, err error) (string, error) {
		if errors.Is(err, circuitbreaker.ErrCallNotPermitted) {
			return "PENDING (breaker open)", nil
		}
		return "PENDING (gateway error)", nil
	}))
	pay := levee.DefaultPipeline(levee.Patterns{Retry: rt, CircuitBreaker: cb}, pending)

	gatewayCalls := 0
	charge := func(ctx context.Context) (string, error) {
		gatewayCalls++
		return "", errGateway
	}
	for i := 1; i <= 3; i++ {
		status, outcome, err := pay.ExecuteOutcome(context.Background(), charge)
		fmt.Printf("request %d: %s fallback=%v err=%v gateway calls so far=%d\n", i, status, outcome.Fallback, err, gatewayCalls)
	}
	fmt.Println("breaker:", cb.State())
	// Output:
	// request 1: PENDING (gateway error) fallback=true err=<nil> gateway calls so far=3
	// request 2: PENDING (breaker open) fallback=true err=<nil> gateway calls so far=5
	// request 3: PENDING (breaker open) fallback=true err=<nil> gateway calls so far=5
	// breaker: OPEN
}

// Compose builds a pipeline in the order written, as Resilience4j's Decorators: the last
// With... is the outermost layer. Here the breaker sits outside the retry, so it records one
// outcome per request however many attempts the retry makes.
func ExampleCompose() {
	cb, _ := circuitbreaker.New("pricing", circuitbreaker.DefaultConfig())
	rt, _ := retry.New("pricing", retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
	pricing := levee.Compose[int]().WithRetry(rt).WithCircuitBreaker(cb)

	attempts := 0
	cents, err := pricing.Execute(context.Background(), func(ctx context.Context) (int, error) {
		attempts++
		if attempts < 3 {
			return 0, errGateway
		}
		return 1999, nil
	})
	m := cb.Metrics()
	fmt.Println(cents, err, attempts, "attempts;", m.NumberOfSuccessfulCalls, "success recorded,", m.NumberOfFailedCalls, "failures")
	// Output: 1999 <nil> 3 attempts; 1 success recorded, 0 failures
}

// NewPatterns builds every pattern of a dependency from literal configs with one error to
// check; a nil config leaves its pattern out. The error names the pattern and the field.
func ExampleNewPatterns() {
	ps, err := levee.NewPatterns("inventory", levee.Configs{
		Retry:          &retry.Config{MaxAttempts: 2, WaitDuration: retry.NoWait},
		CircuitBreaker: &circuitbreaker.Config{SlidingWindowSize: 4, MinimumNumberOfCalls: 4},
		Bulkhead:       &bulkhead.Config{MaxConcurrentCalls: 8},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	stock := levee.DefaultPipeline[int](ps, nil)
	n, err := stock.Execute(context.Background(), func(ctx context.Context) (int, error) { return 12, nil })
	fmt.Println(n, err, "rate limiter:", ps.RateLimiter == nil, "breaker:", ps.CircuitBreaker.State())

	_, err = levee.NewPatterns("inventory", levee.Configs{
		CircuitBreaker: &circuitbreaker.Config{FailureRateThreshold: 150},
	})
	fmt.Println(err)
	// Output:
	// 12 <nil> rate limiter: true breaker: CLOSED
	// levee: patterns "inventory": circuitbreaker: FailureRateThreshold must be in (0, 100], got 150
}

// Must builds a pattern whose config is a literal known at start-up: an invalid literal is a
// bug found by the first run, not an error to handle. Never use it on a config read at run
// time.
func ExampleMust() {
	var (
		breaker = levee.Must(circuitbreaker.New("search", circuitbreaker.Config{SlidingWindowSize: 50}))
		limiter = levee.Must(ratelimiter.New("search", ratelimiter.Config{LimitForPeriod: 100, LimitRefreshPeriod: time.Second}))
	)
	search := levee.DefaultPipeline[[]string](levee.Patterns{CircuitBreaker: breaker, RateLimiter: limiter}, nil)
	hits, err := search.Execute(context.Background(), func(ctx context.Context) ([]string, error) {
		return []string{"levee", "dam"}, nil
	})
	fmt.Println(hits, err, limiter.Metrics().AvailablePermissions)
	// Output: [levee dam] <nil> 99
}

// AllRejections opts in every kind of rejection at once: this retry retries a full bulkhead's
// refusal, which it would otherwise return at once, as Resilience4j's Retry does by default.
// The other call holding the bulkhead's only slot finishes after the first refusal.
func ExampleAllRejections() {
	bh, _ := bulkhead.New("inventory", bulkhead.Config{MaxConcurrentCalls: 1})
	rt, _ := retry.New("inventory", retry.Config{
		MaxAttempts: 3, WaitDuration: retry.NoWait,
		RetryRejections: levee.AllRejections(),
	})
	_ = bh.Acquire(context.Background()) // the other call
	unsubscribe := rt.Subscribe(func(e retry.Event) {
		fmt.Printf("%s after %v\n", e.Type, e.LastErr)
		if e.Type == retry.EventRetry {
			bh.Release() // the other call finishes
		}
	})
	defer unsubscribe()

	reserve := levee.Compose[string]().WithBulkhead(bh).WithRetry(rt)
	status, err := reserve.Execute(context.Background(), func(context.Context) (string, error) {
		return "RESERVED", nil
	})
	fmt.Println(status, err)
	// Output:
	// RETRY after bulkhead: Bulkhead 'inventory' is full and does not permit further calls
	// SUCCESS after bulkhead: Bulkhead 'inventory' is full and does not permit further calls
	// RESERVED <nil>
}
