package async_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
)

var errUnavailable = errors.New("pricing service unavailable")

// Two prices fetched concurrently through one pipeline: the live answer and the fallback's are
// told apart by the future's Outcome.
func Example() {
	cb, _ := circuitbreaker.New("pricing", circuitbreaker.DefaultConfig())
	lastKnown, _ := fallback.New("pricing", fallback.OnAny(fallback.Value(1999)))
	pricing := levee.Compose[int]().WithCircuitBreaker(cb).WithFallback(lastKnown)

	live := async.Go(context.Background(), pricing, func(ctx context.Context) (int, error) {
		return 2450, nil
	})
	stale := async.Go(context.Background(), pricing, func(ctx context.Context) (int, error) {
		return 0, errUnavailable
	})

	for _, f := range []*async.Future[int]{live, stale} {
		cents, err := f.Get(context.Background())
		out := f.Outcome()
		fmt.Println(cents, err, "fallback:", out.Fallback, "cause:", out.Cause)
	}
	m := cb.Metrics()
	fmt.Println("breaker recorded", m.NumberOfSuccessfulCalls, "success,", m.NumberOfFailedCalls, "failure")
	// Output:
	// 2450 <nil> fallback: false cause: <nil>
	// 1999 <nil> fallback: true cause: pricing service unavailable
	// breaker recorded 1 success, 1 failure
}

// GoLazy builds the call inside the guarded execution: a panic while building it (here, a
// request that cannot be encoded) reaches the fallback, as Resilience4j's CompletableFuture
// fallbacks do.
func ExampleGoLazy() {
	degraded, _ := fallback.New("reviews", fallback.OnType(func(ctx context.Context, err *levee.PanicError) ([]string, error) {
		return []string{"(reviews unavailable)"}, nil
	}))
	p := levee.Compose[[]string]().WithFallback(degraded)

	f := async.GoLazy(context.Background(), p, func(ctx context.Context) (levee.Call[[]string], error) {
		var query map[string]string
		query["isbn"] = "0-13-110362-8" // panics: assignment to a nil map
		return func(ctx context.Context) ([]string, error) { return []string{"a classic"}, nil }, nil
	})
	reviews, err := f.Get(context.Background())
	fmt.Println(reviews, err, "fallback:", f.Outcome().Fallback)
	// Output: [(reviews unavailable)] <nil> fallback: true
}

// Map prices a list of books, four at a time, through one pipeline; the results come back in
// input order, the fallback's answers marked.
func ExampleMap() {
	unknown, _ := fallback.New("pricing", fallback.OnAny(fallback.Value(-1)))
	pricing := levee.Compose[int]().WithFallback(unknown)
	isbns := []string{"0-13-110362-8", "0-201-63361-2", "BAD-ISBN", "0-262-03384-4"}

	results, err := async.Map(context.Background(), pricing, func(ctx context.Context, isbn string) (int, error) {
		if isbn == "BAD-ISBN" {
			return 0, errUnavailable
		}
		return len(isbn) * 100, nil
	}, isbns, async.MaxConcurrency(4))

	fmt.Println("error:", err)
	for i, r := range results {
		fmt.Printf("%s: %d fallback=%v\n", isbns[i], r.Value, r.Outcome.Fallback)
	}
	// Output:
	// error: <nil>
	// 0-13-110362-8: 1300 fallback=false
	// 0-201-63361-2: 1300 fallback=false
	// BAD-ISBN: -1 fallback=true
	// 0-262-03384-4: 1300 fallback=false
}

// With FailFast the first failure stops the fan-out: the calls still running are cancelled.
func ExampleAll_failFast() {
	slow := func(ctx context.Context) (string, error) {
		<-ctx.Done() // a slow call that honours its context
		return "", ctx.Err()
	}
	results, err := async.All(context.Background(), nil, []levee.Call[string]{
		slow,
		func(ctx context.Context) (string, error) { return "", errUnavailable },
	}, async.FailFast())
	fmt.Println(err)
	fmt.Println(results[0].Err)
	// Output:
	// pricing service unavailable
	// context canceled
}

// FirstSuccess asks three replicas: the first fails at once, the second hangs, the third answers.
// The hanging one is cancelled, and FirstSuccess returns once it has returned.
func ExampleFirstSuccess() {
	var hungUp atomic.Bool
	replicas := []levee.Call[string]{
		func(ctx context.Context) (string, error) { return "", errUnavailable },
		func(ctx context.Context) (string, error) {
			<-ctx.Done()
			hungUp.Store(true)
			return "", ctx.Err()
		},
		func(ctx context.Context) (string, error) { return "stock: 3 copies", nil },
	}
	v, _, err := async.FirstSuccess(context.Background(), nil, replicas)
	fmt.Println(v, err)
	fmt.Println("hanging replica cancelled:", hungUp.Load())
	// Output:
	// stock: 3 copies <nil>
	// hanging replica cancelled: true
}

// Hedge starts a second attempt when the first has not answered within the delay; the first
// one to succeed wins and the other is cancelled.
func ExampleHedge() {
	var attempts atomic.Int64
	search := func(ctx context.Context) (string, error) {
		if attempts.Add(1) == 1 {
			<-ctx.Done() // the first attempt hit a slow replica
			return "", ctx.Err()
		}
		return "results from attempt 2", nil
	}
	v, _, err := async.Hedge(context.Background(), nil, search, 10*time.Millisecond, 1)
	fmt.Println(v, err)
	fmt.Println("attempts:", attempts.Load())
	// Output:
	// results from attempt 2 <nil>
	// attempts: 2
}

// A worker pool of one worker and a queue of one, as Resilience4j's ThreadPoolBulkhead: the
// third task is refused at once with an error that matches bulkhead.ErrBulkheadFull.
func ExampleWorkerPool() {
	pool, _ := async.NewWorkerPool("reports", async.WorkerPoolConfig{
		CoreThreadPoolSize: 1, MaxThreadPoolSize: 1, QueueCapacity: 1,
	})
	defer pool.Close()

	started, release := make(chan struct{}), make(chan struct{})
	report := func(name string) levee.Call[string] {
		return func(ctx context.Context) (string, error) {
			if name == "january" {
				close(started)
				<-release
			}
			return name + " done", nil
		}
	}
	jan, _ := async.Submit(context.Background(), pool, nil, report("january"))
	<-started
	feb, _ := async.Submit(context.Background(), pool, nil, report("february"))
	_, err := async.Submit(context.Background(), pool, nil, report("march"))
	fmt.Println(err)
	m := pool.Metrics()
	fmt.Println("workers:", m.ThreadPoolSize, "active:", m.ActiveThreadCount, "queued:", m.QueueDepth)

	close(release)
	for _, f := range []*async.Future[string]{jan, feb} {
		v, _ := f.Get(context.Background())
		fmt.Println(v)
	}
	// Output:
	// async: WorkerPool 'reports' is full and does not permit further calls
	// workers: 1 active: 1 queued: 1
	// january done
	// february done
}
