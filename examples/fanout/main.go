// Command fanout prices 200 books concurrently against the loopback payment gateway of
// examples/payment, first while it fails and then while it is slow, once with each of the four
// kinds of fallback recommended with Resilience4j (a cached value, a default, a degraded
// response, failing fast), and prints what each fallback answered.
//
//	go run ./examples/fanout
//
// Each run is one async.Map over the 200 books, 16 at a time, through one pipeline:
// Fallback(CircuitBreaker(TimeLimiter(Bulkhead(price)))), Resilience4j's annotation order. The
// 200 calls share the breaker, so after the first failures it opens and the remaining books are
// answered by the fallback without reaching the gateway; in the slow phase the time limiter
// cancels each request after 100ms, which the gateway sees as a request its client gave up on.
//
// The program checks what it prints: the answers of each kind (exact), the gateway's own
// counters against what levee reports (requests received, requests cancelled, concurrency) and
// the bounds the breaker's configuration implies. It exits with status 0 only when every check
// holds. Timings are real; the whole run takes about two seconds.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/levee-go/levee/examples/payment"
)

const (
	books       = 200 // books priced in each run
	warmBooks   = 150 // books whose price is known from the warm-up, for the cached fallback
	concurrency = 16  // calls in flight at once: MaxConcurrency and the bulkhead's size

	// The breaker opens once it has recorded minCalls failures: it lets in at least minCalls
	// calls, and at most minCalls-1 recorded ones plus concurrency in flight.
	minCalls  = 10
	timeLimit = 100 * time.Millisecond
	// slowLatency is far beyond the time limit, so that the cancellation of a call the time
	// limiter cut off reaches the gateway before it answers even on a loaded machine: the run
	// checks that the gateway saw every such request cancelled.
	slowLatency = 3 * time.Second
)

func main() { os.Exit(run()) }

func run() int {
	gw, err := payment.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		return 1
	}
	defer gw.Close()
	client := payment.NewClient(gw.URL())
	defer client.Close()

	start := time.Now()
	fmt.Printf("fanout: pricing %d books concurrently (%d at a time) on loopback payment gateways (the warm-up's at %s, then one per run)\n\n",
		books, concurrency, gw.URL())
	s := &shop{gw: gw, client: client, skus: skus(books)}
	c := &checks{}

	s.warmUp(c)
	for _, ph := range []phase{
		{"gateway failing: every price request is answered 503", payment.ModeFail},
		{fmt.Sprintf("gateway slow: every price takes %v, the time limit is %v", slowLatency, timeLimit), payment.ModeSlow},
	} {
		fmt.Println(ph.title)
		fmt.Printf("  %-10s %5s %9s %7s %8s %8s %9s  %s\n",
			"fallback", "live", "answered", "errors", "let in", "refused", "received", "what it answered (first and last book)")
		for _, k := range kinds() {
			s.price(c, ph, k)
		}
		fmt.Println()
	}
	return c.summarize(time.Since(start))
}

func skus(n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("BOOK-%03d", i)
	}
	return s
}

// phase is a state of the gateway the books are priced in.
type phase struct {
	title string
	mode  payment.Mode
}

// reset waits until the gateway has finished with the previous run's requests, then sets its
// mode and zeroes its counters.
func (s *shop) reset(mode payment.Mode) {
	s.waitIdle()
	s.gw.SetLatency(slowLatency)
	s.gw.SetMode(mode)
	s.gw.ResetCounters()
}

// waitIdle waits until no request is in the gateway's handlers, so that its counters include
// the requests whose callers have already given up.
func (s *shop) waitIdle() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*slowLatency)
	defer cancel()
	if err := s.gw.WaitIdle(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "gateway still busy:", err)
	}
}
