package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/examples/payment"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/timelimiter"
)

// quote is what the shop shows for a book.
type quote struct {
	Cents int64
	Kind  string // "live", or the kind of fallback that answered
}

func (q quote) String() string {
	switch q.Kind {
	case "default":
		return "price on request (default)"
	case "degraded":
		return fmt.Sprintf("from $%d.%02d (catalogue list price, degraded)", q.Cents/100, q.Cents%100)
	}
	return fmt.Sprintf("$%d.%02d (%s)", q.Cents/100, q.Cents%100, q.Kind)
}

// errPriceUnavailable is the fail-fast answer: no honest price exists, and the storefront maps
// it to "503, try again later". It keeps its cause.
var errPriceUnavailable = errors.New("price unavailable")

// skuKey carries a book's SKU to the degraded fallback, which needs it to look the book up in
// the catalogue.
type skuKey struct{}

// shop is the pricing service: the gateway, its client, the books and the cache of last known
// prices that the cached fallback serves.
type shop struct {
	gw     *payment.Gateway
	client *payment.Client
	skus   []string
	cache  fallback.LastKnown[string, quote]
	// invoked counts the calls of live in the current run: the calls that got past every
	// pattern and sent a request.
	invoked atomic.Int64
}

// kind is one of the kinds of fallback recommended with Resilience4j.
type kind struct {
	name    string
	handler func(s *shop) func(ctx context.Context, err error) (quote, error)
}

func kinds() []kind {
	return []kind{
		{"cached", func(s *shop) func(context.Context, error) (quote, error) {
			// The last price seen from the gateway, marked as such.
			return s.cache.Serve(func(q quote) quote { q.Kind = "cached"; return q })
		}},
		{"default", func(*shop) func(context.Context, error) (quote, error) {
			// A neutral answer for an optional feature: no price shown.
			return fallback.Value(quote{Kind: "default"})
		}},
		{"degraded", func(*shop) func(context.Context, error) (quote, error) {
			// Part of the answer is still available: the catalogue's list price, without the
			// gateway's live price.
			return func(ctx context.Context, err error) (quote, error) {
				sku, _ := ctx.Value(skuKey{}).(string)
				return quote{Cents: payment.ListPrice(sku), Kind: "degraded"}, nil
			}
		}},
		{"fail fast", func(*shop) func(context.Context, error) (quote, error) {
			return fallback.FailFast[quote](func(cause error) error {
				return fmt.Errorf("%w: %w", errPriceUnavailable, cause)
			})
		}},
	}
}

// patterns are the breaker, time limiter and bulkhead of one run, fresh for each so that no
// run inherits another's open breaker.
type patterns struct{ levee.Patterns }

// newPatterns builds them. The configurations are constants of this program, so an error is a
// bug in it: levee.Must stops it at once.
func newPatterns() patterns {
	return patterns{levee.Must(levee.NewPatterns("pricing", levee.Configs{
		CircuitBreaker: &circuitbreaker.Config{
			SlidingWindowSize:       20,
			MinimumNumberOfCalls:    minCalls,
			FailureRateThreshold:    50,
			WaitDurationInOpenState: time.Minute,
			IgnoreErrors:            []error{payment.ErrInvalidOrder},
		},
		TimeLimiter: &timelimiter.Config{TimeoutDuration: timeLimit},
		// The time limiter sits outside the bulkhead (Resilience4j's order), so a call it gives
		// up on holds its permit until the cancelled request has unwound, a moment after the
		// limiter returned. The next book waits for it rather than being refused.
		Bulkhead: &bulkhead.Config{MaxConcurrentCalls: concurrency, MaxWaitDuration: time.Second},
	}))}
}

func (p patterns) pipeline(fb *fallback.Fallback[quote]) *levee.Pipeline[quote] {
	return levee.DefaultPipeline(p.Patterns, fb)
}

// waitAbandoned waits until the calls the time limiter gave up on have returned, and so given
// their bulkhead permits back: a cancelled HTTP request unwinds a moment after the limiter has
// answered.
func (p patterns) waitAbandoned() {
	deadline := time.Now().Add(5 * time.Second)
	for p.TimeLimiter.Metrics().NumberOfAbandonedCalls > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

// live prices one book on the gateway.
func (s *shop) live(ctx context.Context, sku string) (quote, error) {
	s.invoked.Add(1)
	cents, err := s.client.Price(ctx, sku)
	if err != nil {
		return quote{}, err
	}
	return quote{Cents: cents, Kind: "live"}, nil
}

// fanOut prices every SKU through p, concurrency at a time. Each call's context carries its SKU,
// for the cached and degraded fallbacks.
func (s *shop) fanOut(p *levee.Pipeline[quote], skus []string) []async.Result[quote] {
	results, _ := async.Map(context.Background(), p, s.live, skus,
		async.MaxConcurrency(concurrency),
		async.ItemContext(func(ctx context.Context, i int) context.Context {
			ctx = context.WithValue(ctx, skuKey{}, skus[i])
			return s.cache.WithKey(ctx, skus[i])
		}))
	return results
}

// warmUp prices the first warmBooks books while the gateway is healthy and keeps their prices
// as the last known ones.
func (s *shop) warmUp(c *checks) {
	s.reset(payment.ModeOK)
	skus := s.skus[:warmBooks]
	// No time limit here: the warm-up learns prices, and a loaded machine may take longer than
	// the 100ms the priced runs allow for a healthy answer.
	p := newPatterns()
	p.TimeLimiter = nil
	results := s.fanOut(p.pipeline(nil), skus)
	live := 0
	for i, r := range results {
		if r.Err == nil && r.Value.Kind == "live" {
			live++
			s.cache.Put(skus[i], r.Value)
		}
	}
	s.waitIdle()
	fmt.Printf("warm-up, gateway healthy: %d books priced live, their prices kept as last known (gateway received %d)\n\n",
		live, s.gw.Received())
	c.expect("warm-up: every book priced live", warmBooks, live)
	c.expect("warm-up: the gateway received one request per book", warmBooks, int(s.gw.Received()))
}

// price runs one fan-out of every book in phase ph with the fallback kind k, prints its row and
// checks it.
func (s *shop) price(c *checks, ph phase, k kind) {
	done, err := s.freshGateway()
	if err != nil {
		c.n++
		c.failed = append(c.failed, fmt.Sprintf("%s/%s: gateway: %v", ph.mode, k.name, err))
		return
	}
	defer done()
	s.reset(ph.mode)
	s.invoked.Store(0)
	fb := levee.Must(fallback.New(k.name, fallback.OnAny(k.handler(s))))
	pats := newPatterns()
	results := s.fanOut(pats.pipeline(fb), s.skus)
	pats.waitAbandoned()
	s.waitIdle()
	t := tally(results)
	fmt.Printf("  %-10s %5d %9d %7d %8d %8d %9d  %s · %s\n",
		k.name, t.live, t.answered, t.errors, t.admitted(), t.refused, s.gw.Received(),
		describe(results[0]), describe(results[len(results)-1]))
	s.check(c, ph, k, results, t, pats)
}

// freshGateway gives the run a gateway and a client of its own, and returns the function that
// closes them and restores the previous ones. On a loaded machine a request the previous run's
// time limiter cut off may have been written to a socket and not yet read by the gateway; on
// the same gateway it would arrive during this run and be counted as one of its requests.
// Closing a gateway waits for its connections, so none of its requests reaches the next one.
func (s *shop) freshGateway() (func(), error) {
	gw, err := payment.Start()
	if err != nil {
		return nil, err
	}
	client := payment.NewClient(gw.URL())
	oldGW, oldClient := s.gw, s.client
	s.gw, s.client = gw, client
	return func() {
		client.Close()
		gw.Close()
		s.gw, s.client = oldGW, oldClient
	}, nil
}

// describe says in a few words what one book got.
func describe(r async.Result[quote]) string {
	switch {
	case r.Err != nil && errors.Is(r.Err, fallback.ErrNoLastKnown):
		return "no last known price"
	case r.Err != nil:
		return errorKind(r.Err)
	default:
		return r.Value.String()
	}
}

// errorKind names an error by what caused it: the storefront's fail-fast error and its cause.
func errorKind(err error) string {
	var cause string
	switch {
	case errors.Is(err, circuitbreaker.ErrCallNotPermitted):
		cause = "breaker open"
	case errors.Is(err, bulkhead.ErrBulkheadFull):
		cause = "bulkhead full"
	case errors.Is(err, timelimiter.ErrTimeout):
		cause = "timeout"
	case errors.Is(err, payment.ErrGateway):
		cause = "gateway error"
	default:
		cause = err.Error()
	}
	if errors.Is(err, errPriceUnavailable) {
		return "price unavailable (" + cause + ")"
	}
	return cause
}
