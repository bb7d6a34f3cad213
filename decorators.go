package levee

import (
	"context"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

// Decorators builds a guarded call in explicit order, as Resilience4j's Decorators: each
// With... wraps everything before it, so the last one added is the outermost layer.
//
//	pay := levee.Of(charge).
//		WithBulkhead(bh).          // innermost: holds a permit only while the call runs
//		WithCircuitBreaker(cb).    // every attempt is recorded
//		WithRetry(rt).             // repeats the whole inner stack
//		WithFallback(pending).     // outermost: answers once the retries are exhausted
//		Decorate()
//
// A Decorators value is a builder: With... methods return a new one and keep the receiver.
type Decorators[T any] struct {
	call     Call[T]
	pipeline *Pipeline[T]
}

// Of starts a Decorators chain around call.
func Of[T any](call Call[T]) *Decorators[T] {
	return &Decorators[T]{call: call, pipeline: Compose[T]()}
}

func (d *Decorators[T]) with(p *Pipeline[T]) *Decorators[T] {
	return &Decorators[T]{call: d.call, pipeline: p}
}

// WithBulkhead wraps the chain so far in bh (see Pipeline.WithBulkhead).
func (d *Decorators[T]) WithBulkhead(bh *bulkhead.Bulkhead) *Decorators[T] {
	return d.with(d.pipeline.WithBulkhead(bh))
}

// WithTimeLimiter wraps the chain so far in tl (see Pipeline.WithTimeLimiter).
func (d *Decorators[T]) WithTimeLimiter(tl *timelimiter.TimeLimiter) *Decorators[T] {
	return d.with(d.pipeline.WithTimeLimiter(tl))
}

// WithRateLimiter wraps the chain so far in rl (see Pipeline.WithRateLimiter).
func (d *Decorators[T]) WithRateLimiter(rl *ratelimiter.RateLimiter) *Decorators[T] {
	return d.with(d.pipeline.WithRateLimiter(rl))
}

// WithCircuitBreaker wraps the chain so far in cb (see Pipeline.WithCircuitBreaker).
func (d *Decorators[T]) WithCircuitBreaker(cb *circuitbreaker.CircuitBreaker) *Decorators[T] {
	return d.with(d.pipeline.WithCircuitBreaker(cb))
}

// WithRetry wraps the chain so far in r (see Pipeline.WithRetry).
func (d *Decorators[T]) WithRetry(r *retry.Retry) *Decorators[T] {
	return d.with(d.pipeline.WithRetry(r))
}

// WithFallback wraps the chain so far in f (see Pipeline.WithFallback).
func (d *Decorators[T]) WithFallback(f *fallback.Fallback[T]) *Decorators[T] {
	return d.with(d.pipeline.WithFallback(f))
}

// Pipeline returns the composition built so far, reusable for other calls.
func (d *Decorators[T]) Pipeline() *Pipeline[T] { return d.pipeline }

// Decorate returns the guarded call.
func (d *Decorators[T]) Decorate() Call[T] { return d.pipeline.Decorate(d.call) }

// Execute runs the guarded call once.
func (d *Decorators[T]) Execute(ctx context.Context) (T, error) {
	return d.pipeline.Execute(ctx, d.call)
}

// Patterns names the patterns guarding one dependency. It is not generic, so one Patterns
// value serves calls of every result type; any field may be nil.
type Patterns struct {
	Retry          *retry.Retry
	CircuitBreaker *circuitbreaker.CircuitBreaker
	RateLimiter    *ratelimiter.RateLimiter
	TimeLimiter    *timelimiter.TimeLimiter
	Bulkhead       *bulkhead.Bulkhead
}

// DefaultPipeline nests ps in Resilience4j's annotation (aspect) order, with the fallback
// outermost:
//
//	Fallback(Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(call))))))
//
// Each retry attempt is one breaker decision and takes one rate-limiter permission, gets its own
// deadline, and holds the bulkhead only while it runs; the fallback answers only when the retry
// has given up. Unlike Resilience4j's annotations, the fallback cannot be placed inside the
// retry here: use Compose or Of for another order. Nil fields and a nil fb are skipped.
//
// Because the bulkhead sits inside the time limiter, an attempt the time limiter has given up
// on keeps its bulkhead permit until the call really returns (its context is cancelled at the
// deadline, so a call that honours it returns at once). The bulkhead thus counts what really
// runs against the dependency; give it a MaxWaitDuration if the next attempt should wait for
// that permit rather than be refused.
func DefaultPipeline[T any](ps Patterns, fb *fallback.Fallback[T]) *Pipeline[T] {
	return Compose[T]().
		WithBulkhead(ps.Bulkhead).
		WithTimeLimiter(ps.TimeLimiter).
		WithRateLimiter(ps.RateLimiter).
		WithCircuitBreaker(ps.CircuitBreaker).
		WithRetry(ps.Retry).
		WithFallback(fb)
}
