package main

import (
	"context"
	"fmt"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/examples/payment"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

// Quote is the unit price an order is charged at.
type Quote struct {
	SKU       string
	UnitCents int64
	// Stale marks a price served from the last known prices because the gateway could not
	// answer: the order goes through at that price, and billing can re-check it later.
	Stale    bool
	PricedAt time.Time // when the gateway quoted it
}

// pricer prices orders on the gateway and remembers the last price it got for each SKU.
type pricer struct {
	client *payment.Client
	// last holds one entry per SKU ever priced: the catalogue is a few hundred SKUs, so the
	// cache needs no eviction.
	last fallback.LastKnown[string, Quote]
}

// live asks the gateway for the price of o's SKU: the guarded call, made once per attempt.
func (p *pricer) live(ctx context.Context, o Order) (Quote, error) {
	cents, err := p.client.Price(ctx, o.SKU)
	if err != nil {
		return Quote{}, err
	}
	q := Quote{SKU: o.SKU, UnitCents: cents, PricedAt: time.Now()}
	p.last.Put(o.SKU, q)
	return q, nil
}

// lastKnown answers an order the pipeline gave up on with the SKU's last known price, marked
// stale. A SKU never priced before has none: the order fails with an error matching
// fallback.ErrNoLastKnown, and the stream keeps its cause beside it.
func (p *pricer) lastKnown(_ context.Context, o Order, _ error) (Quote, error) {
	q, ok := p.last.Get(o.SKU)
	if !ok {
		return Quote{}, fmt.Errorf("sku %s: %w", o.SKU, fallback.ErrNoLastKnown)
	}
	q.Stale = true
	return q, nil
}

// The breaker decides from minimumCalls calls on, and the retry makes up to attempts calls
// per order. A run that pauses while the breaker is open answers from the fallback only the
// orders whose every attempt failed while the breaker still let calls through: before it
// opens, and in a HALF_OPEN period, which lets fewer calls through. minimumCalls × attempts
// bounds them with room to spare for the paused run's checks.
const (
	minimumCalls = 20
	attempts     = 3
)

// newPatterns configures the patterns guarding the pricing gateway, as a service calling a
// pricing API would: the errors the gateway is to blame for (5xx, timeouts) are retried and
// recorded, the caller's own (4xx) neither.
func newPatterns(cfg config) (levee.Patterns, error) {
	// Exponential backoff with jitter, so that workers that failed together do not retry
	// together: about 50ms, then 100ms.
	backoff, err := retry.ExponentialRandomBackoff(cfg.Backoff, 2, 0.5, 4*cfg.Backoff, nil)
	if err != nil {
		return levee.Patterns{}, err
	}
	cbc := circuitbreaker.Config{
		SlidingWindowSize:    50,
		MinimumNumberOfCalls: minimumCalls,
		FailureRateThreshold: 50,
		// Calls that take most of the time limit are a warning sign even when they answer.
		SlowCallDurationThreshold:             cfg.TimeLimit * 4 / 5,
		SlowCallRateThreshold:                 80,
		WaitDurationInOpenState:               cfg.OpenWait,
		PermittedNumberOfCallsInHalfOpenState: 5,
		IgnoreErrors:                          []error{payment.ErrInvalidOrder},
	}
	if cfg.OpenWait == 0 {
		cbc.WaitIntervalFunctionInOpenState = func(int) time.Duration { return 0 }
	}
	return levee.NewPatterns("pricing", levee.Configs{
		Retry: &retry.Config{
			MaxAttempts:      attempts,
			IntervalFunction: backoff,
			// A price is a GET: retrying it after a timeout is safe.
			RetryErrors:  []error{payment.ErrGateway, timelimiter.ErrTimeout},
			IgnoreErrors: []error{payment.ErrInvalidOrder},
		},
		CircuitBreaker: &cbc,
		// The gateway's quota: 2,000 requests a second, in 50ms slices. A caller waits for
		// its slice rather than fail, but not longer than a few slices.
		RateLimiter: &ratelimiter.Config{
			LimitForPeriod:     100,
			LimitRefreshPeriod: 50 * time.Millisecond,
			TimeoutDuration:    250 * time.Millisecond,
		},
		// One deadline per attempt; the attempt's request is cancelled at the deadline
		// (Resilience4j's cancelRunningFuture), which the gateway sees.
		TimeLimiter: &timelimiter.Config{TimeoutDuration: cfg.TimeLimit},
		// The bulkhead caps what the gateway carries at the consumer's concurrency. It sits
		// inside the time limiter, so an attempt the limiter gave up on keeps its permit until
		// its request has unwound: the next attempt waits a moment for it rather than being
		// refused.
		Bulkhead: &bulkhead.Config{
			MaxConcurrentCalls: cfg.Concurrency,
			MaxWaitDuration:    cfg.TimeLimit,
		},
	})
}
