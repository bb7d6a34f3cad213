package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/examples/payment"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/timelimiter"
)

// counts sums up one fan-out: how each book was answered and what stopped its live price.
type counts struct {
	live, answered, errors int
	refused                int // calls the open breaker refused: they never reached the gateway
	bulkheadFull           int // calls the bulkhead refused
	timeouts               int // calls the time limiter cut off
	byKind                 map[string]int
}

// admitted is the number of calls the breaker let in.
func (t counts) admitted() int { return t.live + t.answered + t.errors - t.refused }

func tally(results []async.Result[quote]) counts {
	t := counts{byKind: map[string]int{}}
	for _, r := range results {
		cause := r.Err
		switch {
		case r.Err != nil:
			t.errors++
		case r.Outcome.Fallback:
			t.answered++
			t.byKind[r.Value.Kind]++
			cause = r.Outcome.Cause
		default:
			t.live++
		}
		if errors.Is(cause, circuitbreaker.ErrCallNotPermitted) {
			t.refused++
		}
		if errors.Is(cause, bulkhead.ErrBulkheadFull) {
			t.bulkheadFull++
		}
		if errors.Is(cause, timelimiter.ErrTimeout) {
			t.timeouts++
		}
	}
	return t
}

// check verifies one fan-out against what its fallback kind and the gateway's phase imply.
func (s *shop) check(c *checks, ph phase, k kind, results []async.Result[quote], t counts, p patterns) {
	name := ph.mode.String() + "/" + k.name + ": "
	c.expect(name+"no live price", 0, t.live)
	switch k.name {
	case "cached":
		c.expect(name+"the warmed books answered from the cache", warmBooks, t.byKind["cached"])
		c.expect(name+"the other books fail: no last known price", books-warmBooks, t.errors)
		right := 0
		for i, r := range results {
			if i < warmBooks && r.Err == nil && r.Value.Cents == payment.ListPrice(s.skus[i]) {
				right++
			}
			if i >= warmBooks && errors.Is(r.Err, fallback.ErrNoLastKnown) {
				right++
			}
		}
		c.expect(name+"each answer is the book's own last price, or ErrNoLastKnown", books, right)
	case "default":
		c.expect(name+"every book answered with the default", books, t.byKind["default"])
	case "degraded":
		right := 0
		for i, r := range results {
			if r.Err == nil && r.Value.Kind == "degraded" && r.Value.Cents == payment.ListPrice(s.skus[i]) {
				right++
			}
		}
		c.expect(name+"every book answered with its catalogue price", books, right)
	case "fail fast":
		right := 0
		for _, r := range results {
			if errors.Is(r.Err, errPriceUnavailable) && (errors.Is(r.Err, payment.ErrGateway) ||
				errors.Is(r.Err, timelimiter.ErrTimeout) || errors.Is(r.Err, circuitbreaker.ErrCallNotPermitted)) {
				right++
			}
		}
		c.expect(name+"every book fails fast, its cause kept", books, right)
	}

	admitted, invoked := t.admitted(), int(s.invoked.Load())
	c.within(name+"calls the breaker let in before it opened", minCalls, minCalls-1+concurrency, admitted)
	c.expect(name+"the breaker is open", int(circuitbreaker.Open), int(p.CircuitBreaker.State()))
	c.expect(name+"no call refused by the bulkhead", 0, t.bulkheadFull)
	c.within(name+"calls that sent a request, out of those let in", 1, admitted, invoked)
	// A call the time limiter cuts off may end before its request reaches the gateway (on a
	// loaded machine, even a failing answer can take the 100ms), so each timeout may stand
	// for a request the gateway never saw; no request arrives that was not sent.
	received := int(s.gw.Received())
	c.within(name+"the gateway received the requests sent, bar those cut off before they left", invoked-t.timeouts, invoked, received)
	c.expect(name+"the breaker counted its refusals", t.refused, p.CircuitBreaker.Metrics().NumberOfNotPermittedCalls)
	c.expect(name+"every bulkhead permit is back", concurrency, p.Bulkhead.Metrics().AvailableConcurrentCalls)
	if ph.mode == payment.ModeSlow {
		c.expect(name+"every call let in timed out", admitted, t.timeouts)
		c.expect(name+"the gateway saw every request it received cancelled", received, int(s.gw.CancelledByClient()))
	} else {
		// The gateway answers 503 at once, so a request is cancelled only when a loaded
		// machine carried that answer past the time limit: each cancelled request is one of
		// the calls the time limiter cut off.
		c.within(name+"requests cancelled, each by a timeout", 0, t.timeouts, int(s.gw.CancelledByClient()))
		// A failing request leaves the gateway before its answer is sent, so the gateway never
		// holds more than the calls in flight. (A cancelled request may linger in the gateway
		// after its caller moved on, so this bound does not hold in the slow phase.)
		c.within(name+"requests in the gateway at once", 1, concurrency, int(s.gw.MaxInFlight()))
	}
}

// checks collects the verdicts of the run.
type checks struct {
	n      int
	failed []string
}

func (c *checks) expect(what string, want, got int) {
	c.n++
	if want != got {
		c.failed = append(c.failed, fmt.Sprintf("%s: expected %d, measured %d", what, want, got))
	}
}

func (c *checks) within(what string, lo, hi, got int) {
	c.n++
	if got < lo || got > hi {
		c.failed = append(c.failed, fmt.Sprintf("%s: expected %d to %d, measured %d", what, lo, hi, got))
	}
}

// summarize prints the verdict and returns the exit status.
func (c *checks) summarize(elapsed time.Duration) int {
	if len(c.failed) == 0 {
		fmt.Printf("✓ all %d checks hold (%.1fs)\n", c.n, elapsed.Seconds())
		return 0
	}
	fmt.Printf("✗ %d of %d checks failed (%.1fs):\n", len(c.failed), c.n, elapsed.Seconds())
	for _, f := range c.failed {
		fmt.Println("  ✗", f)
	}
	return 1
}
