package stream_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/stream"
)

type Order struct {
	ID  string
	SKU string
}

var errPricingDown = errors.New("pricing: unavailable")

// A consumer of orders prices each one through the pricing service, guarded by a retry and a
// breaker, and falls back to a cached price per SKU when the service cannot answer.
func ExampleMap() {
	live := map[string]int{"book": 1999, "pen": 150}     // what the pricing service knows
	cached := map[string]int{"book": 1899, "lamp": 4500} // last known prices
	price := func(_ context.Context, o Order) (int, error) {
		if p, ok := live[o.SKU]; ok {
			return p, nil
		}
		return 0, errPricingDown
	}

	rt, _ := retry.New("pricing", retry.Config{MaxAttempts: 2, WaitDuration: retry.NoWait})
	cb, _ := circuitbreaker.New("pricing", circuitbreaker.Config{})
	pricing := levee.DefaultPipeline[int](levee.Patterns{Retry: rt, CircuitBreaker: cb}, nil)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // ends the stream's goroutines even if the loop below stops early
	orders := make(chan Order)
	go func() {
		defer close(orders)
		for _, o := range []Order{{"o-1", "book"}, {"o-2", "lamp"}, {"o-3", "pen"}, {"o-4", "sofa"}} {
			select {
			case orders <- o:
			case <-ctx.Done():
				return
			}
		}
	}()

	results, err := stream.Map(ctx, orders, pricing, price,
		stream.Concurrency(2),
		stream.WithFallback(func(_ context.Context, o Order, err error) (int, error) {
			if p, ok := cached[o.SKU]; ok {
				return p, nil
			}
			return 0, err
		}))
	if err != nil {
		panic(err)
	}
	for r := range results {
		switch {
		case r.Err != nil:
			fmt.Printf("%s %-4s no price: %v\n", r.In.ID, r.In.SKU, errors.Is(r.Err, errPricingDown))
		case r.Fallback:
			fmt.Printf("%s %-4s %5d cached\n", r.In.ID, r.In.SKU, r.Value)
		default:
			fmt.Printf("%s %-4s %5d live\n", r.In.ID, r.In.SKU, r.Value)
		}
	}
	fmt.Println("pricing calls failed:", rt.Metrics().NumberOfFailedCallsWithRetryAttempt)
	// Output:
	// o-1 book  1999 live
	// o-2 lamp  4500 cached
	// o-3 pen    150 live
	// o-4 sofa no price: true
	// pricing calls failed: 2
}

// A flaky feed drops its connection after two lines the first time it is read. Retry
// subscribes again, which reads the feed from the start: the lines of the failed attempt
// were already delivered, and Item.Attempt tells them apart.
func ExampleSubscribe() {
	reads := 0
	feed := stream.Source[string](func(ctx context.Context, emit func(string) error) error {
		reads++
		for i, line := range []string{"alpha", "beta", "gamma"} {
			if reads == 1 && i == 2 {
				return errors.New("connection reset")
			}
			if err := emit(line); err != nil {
				return err
			}
		}
		return nil
	})

	rt, _ := retry.New("feed", retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
	lines, err := stream.Subscribe(context.Background(), levee.Patterns{Retry: rt}, feed)
	if err != nil {
		panic(err)
	}
	for it := range lines {
		if it.Err != nil {
			fmt.Println("failed:", it.Err)
			continue
		}
		fmt.Printf("attempt %d: %s\n", it.Attempt, it.Value)
	}
	// Output:
	// attempt 1: alpha
	// attempt 1: beta
	// attempt 2: alpha
	// attempt 2: beta
	// attempt 2: gamma
}

// While the breaker is open the stream is not even opened: a fallback source serves a cached
// copy instead.
func ExampleWithFallbackSource() {
	cb, _ := circuitbreaker.New("quotes", circuitbreaker.Config{})
	_ = cb.TransitionToOpenState() // as after a run of failures

	opened := 0
	quotes := stream.FromChan(func(ctx context.Context) (<-chan string, error) {
		opened++
		return nil, errors.New("not reached")
	})
	items, err := stream.Subscribe(context.Background(), levee.Patterns{CircuitBreaker: cb}, quotes,
		stream.WithFallbackSource(func(_ context.Context, cause error, emit func(string) error) error {
			if !errors.Is(cause, circuitbreaker.ErrCallNotPermitted) {
				return cause
			}
			for _, q := range []string{"ACME 12.5 (cached)", "INIT 7.25 (cached)"} {
				if err := emit(q); err != nil {
					return err
				}
			}
			return nil
		}))
	if err != nil {
		panic(err)
	}
	for it := range items {
		fmt.Println(it.Value, it.Fallback)
	}
	fmt.Println("opened:", opened)
	// Output:
	// ACME 12.5 (cached) true
	// INIT 7.25 (cached) true
	// opened: 0
}

// Batch groups elements so that one guarded call writes several at once.
func ExampleBatch() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan string, 5)
	for _, e := range []string{"a", "b", "c", "d", "e"} {
		events <- e
	}
	close(events)
	written, err := stream.Batch(ctx, events, 2, 0, nil, func(_ context.Context, batch []string) (int, error) {
		fmt.Println("write", strings.Join(batch, ","))
		return len(batch), nil
	})
	if err != nil {
		panic(err)
	}
	total := 0
	for r := range written {
		total += r.Value
	}
	fmt.Println("written:", total)
	// Output:
	// write a,b
	// write c,d
	// write e
	// written: 5
}
