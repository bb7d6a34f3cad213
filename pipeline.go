package levee

import (
	"context"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/internal/safe"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

// Pipeline is an ordered composition of patterns that can guard any call returning T. It is
// immutable and safe for concurrent use: With... methods return a new Pipeline and leave the
// receiver unchanged, so one Pipeline built at start-up serves every call, every stream element
// and every future of a dependency.
//
// Order follows Resilience4j's Decorators: each With... wraps everything added before it, so the
// last one added is the outermost layer. Compose[T]().WithCircuitBreaker(cb).WithRetry(r) is
// Retry(CircuitBreaker(call)): one breaker decision per attempt. DefaultPipeline builds
// Resilience4j's annotation order instead.
//
// A nil *Pipeline guards nothing: its calls run as they are, except that a panic still becomes a
// *PanicError and a nil call ErrNilCall.
type Pipeline[T any] struct {
	layers []layer[T] // layers[0] is innermost
	// invoke is invoke[T] made once: a generic function value is a closure over its
	// dictionary, and making it on every Execute would cost an allocation per call.
	invoke func(context.Context, Call[T]) (T, error)
}

type kind uint8

const (
	kindBulkhead kind = iota + 1
	kindTimeLimiter
	kindRateLimiter
	kindCircuitBreaker
	kindRetry
	kindFallback
)

type layer[T any] struct {
	kind kind
	bh   *bulkhead.Bulkhead
	tl   *timelimiter.TimeLimiter
	rl   *ratelimiter.RateLimiter
	cb   *circuitbreaker.CircuitBreaker
	rt   *retry.Retry
	fb   *fallback.Fallback[T]
}

// Outcome tells how a guarded call was answered, for callers that must tell a fallback's answer
// from a live one (a price served from cache, a PENDING payment).
type Outcome struct {
	// Fallback is true when a fallback handler answered: the returned value is its answer. A
	// handler that itself failed does not count; its error comes back as a *fallback.Error that
	// keeps the original.
	Fallback bool
	// Cause is the error the fallback answered; nil when Fallback is false.
	Cause error
}

// Compose returns an empty Pipeline for calls returning T, to be built with the With... methods.
func Compose[T any]() *Pipeline[T] { return &Pipeline[T]{invoke: invoke[T]} }

func (p *Pipeline[T]) orEmpty() *Pipeline[T] {
	if p == nil {
		return Compose[T]()
	}
	return p
}

func (p *Pipeline[T]) with(l layer[T]) *Pipeline[T] {
	n := Compose[T]()
	if p != nil {
		n.layers = make([]layer[T], 0, len(p.layers)+1)
		n.layers = append(n.layers, p.layers...)
	}
	n.layers = append(n.layers, l)
	return n
}

// WithBulkhead returns p wrapped in bh: the call holds one bulkhead permit while everything
// added before runs. A nil bh adds nothing.
func (p *Pipeline[T]) WithBulkhead(bh *bulkhead.Bulkhead) *Pipeline[T] {
	if bh == nil {
		return p.orEmpty()
	}
	return p.with(layer[T]{kind: kindBulkhead, bh: bh})
}

// WithTimeLimiter returns p wrapped in tl: everything added before runs with its own deadline
// and the caller gets timelimiter.ErrTimeout at the deadline. A nil tl adds nothing.
func (p *Pipeline[T]) WithTimeLimiter(tl *timelimiter.TimeLimiter) *Pipeline[T] {
	if tl == nil {
		return p.orEmpty()
	}
	return p.with(layer[T]{kind: kindTimeLimiter, tl: tl})
}

// WithRateLimiter returns p wrapped in rl: each run of what was added before takes one
// permission. A nil rl adds nothing.
func (p *Pipeline[T]) WithRateLimiter(rl *ratelimiter.RateLimiter) *Pipeline[T] {
	if rl == nil {
		return p.orEmpty()
	}
	return p.with(layer[T]{kind: kindRateLimiter, rl: rl})
}

// WithCircuitBreaker returns p wrapped in cb: each run of what was added before is one call
// for the breaker. A nil cb adds nothing.
func (p *Pipeline[T]) WithCircuitBreaker(cb *circuitbreaker.CircuitBreaker) *Pipeline[T] {
	if cb == nil {
		return p.orEmpty()
	}
	return p.with(layer[T]{kind: kindCircuitBreaker, cb: cb})
}

// WithRetry returns p wrapped in r: what was added before is attempted up to r's MaxAttempts
// times. A nil r adds nothing.
func (p *Pipeline[T]) WithRetry(r *retry.Retry) *Pipeline[T] {
	if r == nil {
		return p.orEmpty()
	}
	return p.with(layer[T]{kind: kindRetry, rt: r})
}

// WithFallback returns p wrapped in f: f answers the failures of what was added before. Added
// last, it answers only once everything inside has given up; added before a retry, the retry
// sees its answers as successes and never retries (the seed's pitfall, kept on purpose: the
// explicit builder keeps the order written). A nil f adds nothing.
func (p *Pipeline[T]) WithFallback(f *fallback.Fallback[T]) *Pipeline[T] {
	if f == nil {
		return p.orEmpty()
	}
	return p.with(layer[T]{kind: kindFallback, fb: f})
}

// Execute runs call through the pipeline. A nil ctx is treated as context.Background().
func (p *Pipeline[T]) Execute(ctx context.Context, call Call[T]) (T, error) {
	return Apply(ctx, p, p.orEmpty().invoke, call)
}

// ExecuteOutcome is Execute that also reports whether a fallback answered.
func (p *Pipeline[T]) ExecuteOutcome(ctx context.Context, call Call[T]) (T, Outcome, error) {
	return ApplyOutcome(ctx, p, p.orEmpty().invoke, call)
}

// Decorate returns call guarded by the pipeline. Decorating allocates once; the returned call
// allocates nothing on its success path unless the pipeline holds a TimeLimiter.
func (p *Pipeline[T]) Decorate(call Call[T]) Call[T] {
	inv := p.orEmpty().invoke
	return func(ctx context.Context) (T, error) { return Apply(ctx, p, inv, call) }
}

func invoke[T any](ctx context.Context, call Call[T]) (T, error) {
	if call == nil {
		var zero T
		return zero, ErrNilCall
	}
	return call(ctx)
}

// Apply runs fn(ctx, a) through p. It is Execute for a call with one argument, passed
// separately so that guarding a stream element or a request costs no closure allocation.
func Apply[A, T any](ctx context.Context, p *Pipeline[T], fn func(context.Context, A) (T, error), a A) (T, error) {
	ctx = safe.Ctx(ctx)
	if fn == nil {
		var zero T
		return zero, ErrNilCall
	}
	var layers []layer[T]
	if p != nil {
		layers = p.layers
	}
	if len(layers) == 0 {
		return safe.Call(ctx, func(ctx context.Context) (T, error) { return fn(ctx, a) })
	}
	return exec(ctx, layers, len(layers)-1, fn, a, nil)
}

// ApplyOutcome is Apply that also reports whether a fallback answered.
func ApplyOutcome[A, T any](ctx context.Context, p *Pipeline[T], fn func(context.Context, A) (T, error), a A) (T, Outcome, error) {
	ctx = safe.Ctx(ctx)
	var out Outcome
	if fn == nil {
		var zero T
		return zero, out, ErrNilCall
	}
	var layers []layer[T]
	if p != nil {
		layers = p.layers
	}
	if len(layers) == 0 {
		v, err := safe.Call(ctx, func(ctx context.Context) (T, error) { return fn(ctx, a) })
		return v, out, err
	}
	v, err := exec(ctx, layers, len(layers)-1, fn, a, &out)
	return v, out, err
}

// exec runs layers[0..i] around fn(ctx, a). Each layer hands the patterns a closure over the
// rest of the chain; the patterns never retain it, so it stays on the stack. Only the time
// limiter needs the call on another goroutine, and execTimeLimited copies what it needs to the
// heap itself so that out stays on the caller's stack.
func exec[A, T any](ctx context.Context, layers []layer[T], i int, fn func(context.Context, A) (T, error), a A, out *Outcome) (T, error) {
	if i < 0 {
		// The innermost pattern's Execute already runs this through safe.Call; guarding it
		// again here would only add a second recover to every call. Apply guards an empty
		// pipeline itself.
		return fn(ctx, a)
	}
	l := &layers[i]
	next := func(ctx context.Context) (T, error) { return exec(ctx, layers, i-1, fn, a, out) }
	switch l.kind {
	case kindBulkhead:
		return bulkhead.Execute(ctx, l.bh, next)
	case kindRateLimiter:
		return ratelimiter.Execute(ctx, l.rl, next)
	case kindCircuitBreaker:
		return circuitbreaker.Execute(ctx, l.cb, next)
	case kindRetry:
		if out == nil {
			return retry.Execute(ctx, l.rt, next)
		}
		// Each attempt reports its own outcome: a fallback that answered an earlier attempt
		// whose result was then retried did not produce what this attempt returns.
		return retry.Execute(ctx, l.rt, func(ctx context.Context) (T, error) {
			*out = Outcome{}
			return next(ctx)
		})
	case kindFallback:
		v, o, err := fallback.ExecuteOutcome(ctx, l.fb, next)
		if o.Fallback && out != nil {
			out.Fallback, out.Cause = true, o.Cause
		}
		return v, err
	case kindTimeLimiter:
		return execTimeLimited(ctx, l.tl, layers, i, fn, a, out)
	default: // unreachable: layers are built only by the With... methods
		return next(ctx)
	}
}

// timeLimitedResult carries the inner chain's fallback outcome out of the time limiter's
// goroutine together with its value, so the outcome is read only when that value is the one
// returned (never after a timeout, when the abandoned run may still be writing).
type timeLimitedResult[T any] struct {
	v   T
	out Outcome
}

func execTimeLimited[A, T any](ctx context.Context, tl *timelimiter.TimeLimiter, layers []layer[T], i int, fn func(context.Context, A) (T, error), a A, out *Outcome) (T, error) {
	r, err := timelimiter.Execute(ctx, tl, func(ctx context.Context) (timeLimitedResult[T], error) {
		var o Outcome
		v, err := exec(ctx, layers, i-1, fn, a, &o)
		return timeLimitedResult[T]{v: v, out: o}, err
	})
	if out != nil && r.out.Fallback {
		*out = r.out
	}
	return r.v, err
}
