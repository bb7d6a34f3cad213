package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/reactivex/rxgo/v2"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/examples/payment"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/operators"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

const (
	minCalls   = 5                      // failures the breaker needs to see before it opens
	probes     = 3                      // calls HALF_OPEN lets through
	waitInOpen = 300 * time.Millisecond // how long the breaker stays OPEN
	// The time limit is far above a healthy answer's latency, so that a loaded machine, which
	// may take a hundred milliseconds to carry one, never lets a healthy attempt time out: the
	// checks count on every timeout being the slow gateway's. A slow request is cancelled at
	// the limit, so the slow latency costs no time.
	timeLimit   = time.Second
	slowLatency = 3 * time.Second
)

// shop prices orders: the gateway, its client, the patterns guarding it, the cache of last
// live prices, and the priced stream.
type shop struct {
	gw       *payment.Gateway
	client   *payment.Client
	patterns levee.Patterns
	cache    fallback.LastKnown[string, int64] // unit price of each SKU, in cents
	invoked  atomic.Int64                      // calls of the price function: requests sent
	price    operators.Operator
}

func newShop(gw *payment.Gateway, client *payment.Client) (*shop, error) {
	s := &shop{gw: gw, client: client}
	var err error
	s.patterns, err = levee.NewPatterns("pricing", levee.Configs{
		Retry: &retry.Config{MaxAttempts: 2, WaitDuration: 20 * time.Millisecond,
			IgnoreErrors: []error{payment.ErrInvalidOrder}},
		CircuitBreaker: &circuitbreaker.Config{SlidingWindowSize: 10, MinimumNumberOfCalls: minCalls,
			WaitDurationInOpenState: waitInOpen, PermittedNumberOfCallsInHalfOpenState: probes,
			IgnoreErrors: []error{payment.ErrInvalidOrder}},
		RateLimiter: &ratelimiter.Config{LimitForPeriod: 1000, LimitRefreshPeriod: time.Second},
		TimeLimiter: &timelimiter.Config{TimeoutDuration: timeLimit},
		Bulkhead:    &bulkhead.Config{MaxConcurrentCalls: concurrency},
	})
	if err != nil {
		return nil, err
	}
	// The fallback is the element-aware one of the operator, outside the pipeline: a
	// pipeline's fallback sees the error, not the order whose SKU it needs.
	pipeline := levee.DefaultPipeline[int64](s.patterns, nil)
	s.price, err = operators.MapResults(pipeline, s.quote, operators.Concurrency(concurrency),
		operators.WithFallback(s.cachedPrice))
	if err != nil {
		return nil, err
	}
	return s, nil
}

// quote asks the gateway for the order's unit price and remembers it for the fallback.
func (s *shop) quote(ctx context.Context, o order) (int64, error) {
	s.invoked.Add(1)
	cents, err := s.client.Price(ctx, o.SKU)
	if err != nil {
		return 0, err
	}
	s.cache.Put(o.SKU, cents)
	return cents * o.Qty, nil
}

// tally sums up one phase.
type tally struct {
	results, live, cached, errors int
	badFailed                     int // the order for an unknown SKU failed
	right                         int // answers equal to the order's list price
	firsts                        []string
}

// run prices the orders of one phase: one subscription of the priced feed.
func (s *shop) run(c *checks, ph phase) {
	time.Sleep(ph.wait)
	s.waitIdle()
	s.gw.SetLatency(slowLatency)
	s.gw.SetMode(ph.mode)
	s.gw.ResetCounters()
	s.invoked.Store(0)
	cb := s.patterns.CircuitBreaker

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // ends every goroutine of the subscription, whatever happens below
	var t tally
	for it := range s.price(feed(ph.name)).Observe(rxgo.WithContext(ctx)) {
		if it.E != nil { // the feed's own errors; it has none
			t.errors++
			continue
		}
		r := it.V.(operators.Result[order, int64])
		t.results++
		switch {
		case r.Err != nil:
			t.errors++
			// Refused by the gateway (422) when it answers, or refused by the open breaker
			// with no cached price to fall back on: never an invented price.
			if r.In.SKU == badSKU && (errors.Is(r.Err, payment.ErrInvalidOrder) || errors.Is(r.Err, fallback.ErrNoLastKnown)) {
				t.badFailed++
			}
		case r.Fallback:
			t.cached++
		default:
			t.live++
		}
		if r.Err == nil && r.Value == payment.ListPrice(r.In.SKU)*r.In.Qty {
			t.right++
		}
		if len(t.firsts) < 2 {
			t.firsts = append(t.firsts, answer(r))
		}
	}
	s.waitIdle()
	fmt.Printf("  %-10s %6d %7d %5d %7d %6d %9d %8s  %s\n", ph.name, ordersPerPhase, t.results, t.live, t.cached,
		t.errors, s.gw.Received(), cb.State(), strings.Join(t.firsts, ", "))
	s.check(c, ph, t)
}

// check verifies one phase against what the gateway's state and the patterns imply.
func (s *shop) check(c *checks, ph phase, t tally) {
	name := ph.name + ": "
	valid := ordersPerPhase - 1
	c.expect(name+"one result per order", ordersPerPhase, t.results)
	c.expect(name+"the order for an unknown SKU fails, with its cause", 1, t.badFailed)
	c.expect(name+"no other error: every SKU has a cached price", 1, t.errors)
	c.expect(name+"every answer is the order's list price", valid, t.right)
	c.expect(name+"live and cached answers add up", valid, t.live+t.cached)
	c.expect(name+"the gateway received every request sent", int(s.invoked.Load()), int(s.gw.Received()))
	c.expect(name+"every bulkhead permit is back", concurrency, s.permitsBack())
	state := s.patterns.CircuitBreaker.State()
	switch ph.mode {
	case payment.ModeOK:
		if ph.wait == 0 {
			c.expect(name+"every valid order priced live", valid, t.live)
			c.expect(name+"one request per order", ordersPerPhase, int(s.gw.Received()))
		} else {
			// Recovered: the probes of HALF_OPEN succeed and close the breaker; the orders
			// that arrive while every probe permit is taken are answered from the cache.
			c.within(name+"valid orders priced live", probes, valid, t.live)
		}
		c.expect(name+"the breaker is closed", int(circuitbreaker.Closed), int(state))
	case payment.ModeFail:
		c.expect(name+"no live price", 0, t.live)
		c.expect(name+"every valid order answered from the cache", valid, t.cached)
		// Each call is at most 2 attempts; the breaker opens after minCalls failures, with at
		// most concurrency-1 other attempts already let in.
		c.within(name+"requests before the breaker opened", minCalls, minCalls+concurrency-1, int(s.gw.Received()))
		c.expect(name+"the breaker is open", int(circuitbreaker.Open), int(state))
	case payment.ModeSlow:
		c.expect(name+"no live price", 0, t.live)
		c.expect(name+"every valid order answered from the cache", valid, t.cached)
		c.within(name+"requests: the HALF_OPEN probes, cut off by the time limit", 1, probes+concurrency-1, int(s.gw.Received()))
		c.expect(name+"the breaker is open again", int(circuitbreaker.Open), int(state))
	}
}

// waitIdle waits until the gateway has finished with every request, including those whose
// callers gave up, so that its counters are complete.
func (s *shop) waitIdle() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.gw.WaitIdle(ctx); err != nil {
		fmt.Println("gateway still busy:", err)
	}
}

// permitsBack waits, up to a second, for the bulkhead's permits to come back from calls the
// time limiter abandoned, and returns the number available.
func (s *shop) permitsBack() int {
	bh := s.patterns.Bulkhead
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if bh.Metrics().AvailableConcurrentCalls == concurrency {
			break
		}
	}
	return bh.Metrics().AvailableConcurrentCalls
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

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
