// Package compose runs an ordered composition of levee's patterns around a call: it is the
// chain behind levee.Pipeline, whose type is defined as Chain (type Pipeline[T] Chain[T]), so
// that a *levee.Pipeline[T] converts to a *Chain[T] and back at no cost.
//
// It sits on the composition floor of levee's layout (beside package levee, above the
// patterns, which it imports, and below the engines): levee builds its Pipeline on it, and
// levee's engines (internal/engine, stream, async, and the operators module) convert the
// *levee.Pipeline[T] they are given with (*compose.Chain[T])(p), once per stream, operator or
// fan-out, to reach what levee.Pipeline does not offer. Nothing is registered at init time.
//
// What they reach is the call's argument taken apart from the call (Apply, ApplyOutcome): they
// guard one element or input at a time with it and allocate nothing per element. A closure
// over the element handed to levee.Pipeline.Execute would escape to the heap, because a time
// limiter runs the call on a goroutine that may outlive Execute; with the argument passed
// apart, only the time limiter's own path copies it. They also reach what the pause of a
// stream needs from the patterns of a chain (Refused, CanRefuse, Watch, RetryAfter) and the
// fallbacks of a chain for a call refused before it ran (Recover).
package compose

import (
	"context"
	"sync"
	"time"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/internal/safe"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

// Chain is an immutable list of layers, layers[0] innermost. The zero Chain and a nil *Chain
// guard nothing.
type Chain[T any] struct {
	layers []Layer[T]
	// invoke is invoke[T] made once: a generic function value is a closure over its
	// dictionary, and making it on every Execute would cost an allocation per call.
	invoke func(context.Context, func(context.Context) (T, error)) (T, error)
}

type kind uint8

const (
	kindBulkhead kind = iota + 1
	kindTimeLimiter
	kindRateLimiter
	kindCircuitBreaker
	kindRetry
	kindFallback
	kindDecorator
	kindPermissions
	kindAdmission
)

// Layer is one pattern of a Chain, made by Bulkhead, TimeLimiter, RateLimiter, CircuitBreaker,
// Retry, Fallback, Decorator, Permissions or Admission. levee's own patterns have layers of
// their own kind, run through their package's Execute without an interface call or an
// allocation; Permissions and Admission take any implementation of their role.
type Layer[T any] struct {
	kind kind
	bh   *bulkhead.Bulkhead
	tl   *timelimiter.TimeLimiter
	rl   *ratelimiter.RateLimiter
	cb   *circuitbreaker.CircuitBreaker
	rt   *retry.Retry
	fb   *fallback.Fallback[T]
	dec  func(ctx context.Context, next func(context.Context) (T, error)) (T, error)
	pl   Permissioner
	ad   Admitter
}

// Bulkhead is a layer that holds one permit of bh while the layers inside it run.
func Bulkhead[T any](bh *bulkhead.Bulkhead) Layer[T] { return Layer[T]{kind: kindBulkhead, bh: bh} }

// TimeLimiter is a layer that runs the layers inside it with tl's deadline.
func TimeLimiter[T any](tl *timelimiter.TimeLimiter) Layer[T] {
	return Layer[T]{kind: kindTimeLimiter, tl: tl}
}

// RateLimiter is a layer that takes one permission of rl per run of the layers inside it.
func RateLimiter[T any](rl *ratelimiter.RateLimiter) Layer[T] {
	return Layer[T]{kind: kindRateLimiter, rl: rl}
}

// CircuitBreaker is a layer that makes each run of the layers inside it one call for cb.
func CircuitBreaker[T any](cb *circuitbreaker.CircuitBreaker) Layer[T] {
	return Layer[T]{kind: kindCircuitBreaker, cb: cb}
}

// Retry is a layer that attempts the layers inside it as r decides.
func Retry[T any](r *retry.Retry) Layer[T] { return Layer[T]{kind: kindRetry, rt: r} }

// Fallback is a layer whose f answers the failures of the layers inside it.
func Fallback[T any](f *fallback.Fallback[T]) Layer[T] { return Layer[T]{kind: kindFallback, fb: f} }

// Decorator is a layer that hands the layers inside it to d as next: d decides whether, when
// and how often next runs, and what the layer returns.
func Decorator[T any](d func(ctx context.Context, next func(context.Context) (T, error)) (T, error)) Layer[T] {
	return Layer[T]{kind: kindDecorator, dec: d}
}

// New returns an empty Chain.
func New[T any]() Chain[T] { return Chain[T]{invoke: invoke[T]} }

// With returns a new Chain: c wrapped in l. c is left unchanged.
func (c Chain[T]) With(l Layer[T]) Chain[T] {
	n := New[T]()
	n.layers = make([]Layer[T], 0, len(c.layers)+1)
	n.layers = append(n.layers, c.layers...)
	n.layers = append(n.layers, l)
	return n
}

// Execute runs call through c. A nil ctx is treated as context.Background(). A nil call
// returns safe.ErrNilCall before any pattern sees it: it is a mistake, not a failure for a
// breaker to record, a retry to repeat or a fallback to answer.
func (c *Chain[T]) Execute(ctx context.Context, call func(context.Context) (T, error)) (T, error) {
	if call == nil {
		var zero T
		return zero, safe.ErrNilCall
	}
	if c == nil || c.invoke == nil {
		return safe.Call(safe.Ctx(ctx), call)
	}
	return Apply(ctx, c, c.invoke, call)
}

// ExecuteOutcome is Execute that also reports whether a fallback answered.
func (c *Chain[T]) ExecuteOutcome(ctx context.Context, call func(context.Context) (T, error)) (T, fallback.Outcome, error) {
	if call == nil {
		var zero T
		return zero, fallback.Outcome{}, safe.ErrNilCall
	}
	if c == nil || c.invoke == nil {
		v, err := safe.Call(safe.Ctx(ctx), call)
		return v, fallback.Outcome{}, err
	}
	return ApplyOutcome(ctx, c, c.invoke, call)
}

func invoke[T any](ctx context.Context, call func(context.Context) (T, error)) (T, error) {
	return call(ctx)
}

// Apply runs fn(ctx, a) through c, as Execute runs a call, without a closure over a. A nil c
// guards nothing; a nil fn returns safe.ErrNilCall.
func Apply[A, T any](ctx context.Context, c *Chain[T], fn func(context.Context, A) (T, error), a A) (T, error) {
	ctx = safe.Ctx(ctx)
	if fn == nil {
		var zero T
		return zero, safe.ErrNilCall
	}
	var layers []Layer[T]
	if c != nil {
		layers = c.layers
	}
	if len(layers) == 0 {
		return safe.Call(ctx, func(ctx context.Context) (T, error) { return fn(ctx, a) })
	}
	return exec(ctx, layers, len(layers)-1, fn, a, nil)
}

// ApplyOutcome is Apply that also reports whether a fallback answered.
func ApplyOutcome[A, T any](ctx context.Context, c *Chain[T], fn func(context.Context, A) (T, error), a A) (T, fallback.Outcome, error) {
	ctx = safe.Ctx(ctx)
	var out fallback.Outcome
	if fn == nil {
		var zero T
		return zero, out, safe.ErrNilCall
	}
	var layers []Layer[T]
	if c != nil {
		layers = c.layers
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
func exec[A, T any](ctx context.Context, layers []Layer[T], i int, fn func(context.Context, A) (T, error), a A, out *fallback.Outcome) (T, error) {
	if i < 0 {
		// The innermost pattern's Execute already runs this through safe.Call; guarding it
		// again here would only add a second recover to every call. Apply guards an empty
		// chain itself.
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
		// A time limiter inside the retry says how long an attempt may take: no retry starts
		// one that could not finish before the caller's deadline.
		expect := attemptTimeout(layers[:i])
		if out == nil {
			return retry.ExecuteExpecting(ctx, l.rt, expect, next)
		}
		// Each attempt reports its own outcome: a fallback that answered an earlier attempt
		// whose result was then retried did not produce what this attempt returns.
		return retry.ExecuteExpecting(ctx, l.rt, expect, func(ctx context.Context) (T, error) {
			*out = fallback.Outcome{}
			return next(ctx)
		})
	case kindFallback:
		v, o, err := fallback.ExecuteOutcome(ctx, l.fb, next)
		if o.Fallback && out != nil {
			*out = o
		}
		return v, err
	case kindTimeLimiter:
		return execTimeLimited(ctx, l.tl, layers, i, fn, a, out)
	case kindDecorator:
		return execDecorated(ctx, l.dec, layers, i, fn, a, out)
	case kindPermissions:
		return execPermitted(ctx, l.pl, next)
	case kindAdmission:
		return execAdmitted(ctx, l.ad, next)
	default: // unreachable: layers are made only by this package's constructors
		return next(ctx)
	}
}

// attemptTimeout returns the TimeoutDuration of the outermost time limiter of inner (the
// layers inside a retry), which bounds each attempt, or 0 when there is none.
func attemptTimeout[T any](inner []Layer[T]) time.Duration {
	for j := len(inner) - 1; j >= 0; j-- {
		if inner[j].kind == kindTimeLimiter && inner[j].tl != nil {
			return inner[j].tl.Config().TimeoutDuration
		}
	}
	return 0
}

// execDecorated runs the decorator dec of layers[i] around layers[0..i-1]. The decorator is
// code levee does not know: it may panic, and it may be the innermost layer, so it runs
// guarded. The next it receives escapes to it, which costs one allocation per run; it is made
// here rather than shared with exec's other layers, whose next must stay on the stack. For the
// same reason the inner layers report their fallback outcome into one of their own, copied to
// out once dec returns, so that out stays on the caller's stack; like a retry's attempts, each
// run of next reports its own outcome, and the run that ends last is the one that counts. dec
// may run next several times at once (a hedge), so each run reports into an outcome of its
// own and hands it over under a lock.
func execDecorated[A, T any](ctx context.Context, dec func(context.Context, func(context.Context) (T, error)) (T, error), layers []Layer[T], i int, fn func(context.Context, A) (T, error), a A, out *fallback.Outcome) (T, error) {
	var last *lastOutcome
	if out != nil {
		last = new(lastOutcome)
	}
	next := func(ctx context.Context) (T, error) {
		if last == nil {
			return exec(ctx, layers, i-1, fn, a, nil)
		}
		var o fallback.Outcome
		v, err := exec(ctx, layers, i-1, fn, a, &o)
		last.set(o)
		return v, err
	}
	v, err := safe.Call(ctx, func(ctx context.Context) (T, error) { return dec(ctx, next) })
	if last != nil {
		if o := last.get(); o.Fallback {
			*out = o
		}
	}
	return v, err
}

// lastOutcome is the outcome of the run of a decorator's next that ended last.
type lastOutcome struct {
	mu  sync.Mutex
	out fallback.Outcome
}

func (l *lastOutcome) set(o fallback.Outcome) {
	l.mu.Lock()
	l.out = o
	l.mu.Unlock()
}

func (l *lastOutcome) get() fallback.Outcome {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.out
}

// timeLimitedResult carries the inner chain's fallback outcome out of the time limiter's
// goroutine together with its value, so the outcome is read only when that value is the one
// returned (never after a timeout, when the abandoned run may still be writing).
type timeLimitedResult[T any] struct {
	v   T
	out fallback.Outcome
}

func execTimeLimited[A, T any](ctx context.Context, tl *timelimiter.TimeLimiter, layers []Layer[T], i int, fn func(context.Context, A) (T, error), a A, out *fallback.Outcome) (T, error) {
	r, err := timelimiter.Execute(ctx, tl, func(ctx context.Context) (timeLimitedResult[T], error) {
		var o fallback.Outcome
		v, err := exec(ctx, layers, i-1, fn, a, &o)
		return timeLimitedResult[T]{v: v, out: o}, err
	})
	if out != nil && r.out.Fallback {
		*out = r.out
	}
	return r.v, err
}

// Recover answers err, the failure of a call refused before c could run it (a worker pool's
// rejection), with the fallbacks of c, innermost first, as if the call inside them had failed
// with err; the other patterns of c never see it, since the call never reached them. It
// returns err unchanged when c has no fallback, or none answers. A nil c guards nothing.
func Recover[T any](ctx context.Context, c *Chain[T], err error) (T, fallback.Outcome, error) {
	ctx = safe.Ctx(ctx)
	var v T
	var out fallback.Outcome
	if c == nil {
		return v, out, err
	}
	for i := range c.layers {
		l := &c.layers[i]
		if l.kind != kindFallback {
			continue
		}
		var o fallback.Outcome
		v, o, err = l.fb.Handle(ctx, v, err)
		if o.Fallback {
			out = o
		}
	}
	return v, out, err
}
