// Command rx prices a stream of orders, an rxgo Observable, through the loopback payment
// gateway of examples/payment, one guarded call per order, while the gateway goes through four
// phases: healthy, failing, slow, and recovered.
//
//	go run ./operators/examples/rx
//
// The pipeline is
//
//	orders (a feed opened at each subscription)
//	  → operators.MapResults(levee.DefaultPipeline(...), price, Concurrency(4), WithFallback(cached price))
//	  → consumer
//
// Each order is one call through Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(price))))),
// Resilience4j's annotation order. When the gateway fails or is slow, the breaker opens and
// the orders are answered from the cache of the last live price of each SKU, marked as
// such; an order for an unknown ("BAD") SKU is the customer's error, never retried nor
// counted by the breaker, and no cached price is invented for it. The same Observable is
// subscribed to once per phase: each subscription opens the feed again.
//
// The program checks what it prints (results out equal orders in, live and cached answers per
// phase, the requests the gateway received, the breaker's state, every permit back, the same
// number of goroutines before and after) and exits with status 0 only when every check holds.
// Timings are real; the run takes about two seconds.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/reactivex/rxgo/v2"

	"github.com/levee-go/levee/examples/payment"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/operators"
)

const (
	badSKU         = "BAD-SKU" // refused by the gateway with 422 Unprocessable Entity
	ordersPerPhase = 30
	skus           = 10 // distinct SKUs of the healthy phase, so each has a cached price
	concurrency    = 4
)

func main() { os.Exit(run()) }

func run() int {
	before := baseGoroutines()
	start := time.Now()
	c := &checks{}
	if err := price(c); err != nil {
		fmt.Fprintln(os.Stderr, "rx:", err)
		return 1
	}
	after := settledGoroutines(before)
	fmt.Printf("goroutines: %d at the start, %d once the gateway is closed\n", before, after)
	c.expect("goroutines before and after", before, after)
	return c.summarize(time.Since(start))
}

// price runs the four phases against a gateway of its own and closes everything it opened.
func price(c *checks) error {
	gw, err := payment.Start()
	if err != nil {
		return err
	}
	defer gw.Close()
	client := payment.NewClient(gw.URL())
	defer client.Close()

	s, err := newShop(gw, client)
	if err != nil {
		return err
	}
	fmt.Printf("rx: pricing %d orders per phase, %d at a time, on the payment gateway at %s\n\n",
		ordersPerPhase, concurrency, gw.URL())
	fmt.Printf("  %-10s %6s %7s %5s %7s %6s %9s %8s  %s\n",
		"phase", "orders", "results", "live", "cached", "errors", "received", "breaker", "first answers")
	for _, ph := range phases() {
		s.run(c, ph)
	}
	fmt.Println()

	// An early stop: take one priced order and cancel. The rest of the feed is never read, and
	// the operator closes its output once every call it made has returned, except the inner
	// part of those the time limiter gave up on at the cancellation: each returns its bulkhead
	// permit as soon as its request notices the cancellation.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := s.price(feed("preview")).Observe(rxgo.WithContext(ctx))
	it := <-ch
	cancel()
	for range ch {
	}
	first, ok := it.V.(operators.Result[order, int64])
	fmt.Printf("preview: %s, then cancelled\n\n", answer(first))
	c.expect("preview: a live price", 1, boolInt(ok && !first.Fallback && first.Err == nil))
	c.expect("preview: every bulkhead permit is back", concurrency, s.permitsBack())
	return nil
}

// baseGoroutines returns the fewest goroutines counted over a few samples: a goroutine that is
// only passing through (a finalizer running, one of the test harness ending) would otherwise
// count as part of the start and never be found again at the end.
func baseGoroutines() int {
	n := runtime.NumGoroutine()
	for range 5 {
		time.Sleep(10 * time.Millisecond)
		n = min(n, runtime.NumGoroutine())
	}
	return n
}

// settledGoroutines waits for the HTTP transport's goroutines to notice their connections are
// closed, then returns the number of goroutines.
func settledGoroutines(want int) int {
	deadline := time.Now().Add(2 * time.Second)
	n := runtime.NumGoroutine()
	for n != want && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	return n
}

// order is one element of the stream.
type order struct {
	ID  string
	SKU string
	Qty int64
}

// feed returns the orders of one phase as an Observable that opens the feed at each
// subscription and stops it when the subscription ends.
func feed(phase string) rxgo.Observable {
	return operators.FromChan(func(ctx context.Context) (<-chan order, error) {
		ch := make(chan order)
		go func() {
			defer close(ch)
			for i := range ordersPerPhase {
				o := order{ID: fmt.Sprintf("%s-%02d", phase, i), SKU: fmt.Sprintf("SKU-%d", i%skus), Qty: int64(1 + i%3)}
				if i == ordersPerPhase-1 {
					o.SKU = badSKU
				}
				select {
				case ch <- o:
				case <-ctx.Done():
					return
				}
			}
		}()
		return ch, nil
	})
}

func answer(r operators.Result[order, int64]) string {
	switch {
	case r.Err != nil:
		return fmt.Sprintf("%s: %v", r.In.ID, shortErr(r.Err))
	case r.Fallback:
		return fmt.Sprintf("%s $%d.%02d (cached)", r.In.ID, r.Value/100, r.Value%100)
	}
	return fmt.Sprintf("%s $%d.%02d", r.In.ID, r.Value/100, r.Value%100)
}

func shortErr(err error) string {
	if errors.Is(err, payment.ErrInvalidOrder) {
		return "invalid order"
	}
	return err.Error()
}

// phase is a state of the gateway the orders are priced in.
type phase struct {
	name string
	mode payment.Mode
	wait time.Duration // before the phase: let an open breaker's wait end
}

func phases() []phase {
	return []phase{
		{name: "healthy", mode: payment.ModeOK},
		{name: "failing", mode: payment.ModeFail},
		{name: "slow", mode: payment.ModeSlow, wait: waitInOpen},
		{name: "recovered", mode: payment.ModeOK, wait: waitInOpen},
	}
}

// cachedPrice is the element fallback: the last live price of the order's SKU, times its
// quantity. It runs once the pipeline has given up (retries spent, breaker open), and only
// for errors the gateway is to blame for: an invalid order is the customer's, and no price is
// invented for it.
func (s *shop) cachedPrice(ctx context.Context, o order, err error) (int64, error) {
	if errors.Is(err, payment.ErrInvalidOrder) {
		return 0, err
	}
	cents, ok := s.cache.Get(o.SKU)
	if !ok {
		return 0, fmt.Errorf("no cached price for %s: %w", o.SKU, fallback.ErrNoLastKnown)
	}
	return cents * o.Qty, nil
}
