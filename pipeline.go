package levee

import (
	"context"
	"reflect"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/internal/compose"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

// Pipeline is an ordered composition of patterns that can guard any call returning T. It is
// immutable and safe for concurrent use: With... methods return a new Pipeline and leave the
// receiver unchanged, so one Pipeline built at start-up serves every call, every stream element
// and every future of a dependency.
//
// Order is explicit, as in Resilience4j's Decorators: each With... wraps everything added before
// it, so the last one added is the outermost layer. Compose[T]().WithCircuitBreaker(cb).WithRetry(r)
// is Retry(CircuitBreaker(call)): one breaker decision per attempt. DefaultPipeline builds
// Resilience4j's annotation order instead.
//
// A nil *Pipeline guards nothing: its calls run as they are, except that a panic still becomes a
// *PanicError and a nil call ErrNilCall. The zero Pipeline guards nothing either.
//
// Pipeline is defined on an internal type that levee's stream, operators and async packages
// share, so that they guard one element at a time with it at no cost and without allocating;
// nothing is registered at init time. Its representation is not part of the API.
type Pipeline[T any] compose.Chain[T]

// chain returns the chain behind p, nil for a nil p.
func (p *Pipeline[T]) chain() *compose.Chain[T] { return (*compose.Chain[T])(p) }

// Compose returns an empty Pipeline for calls returning T, to be built with the With... methods.
func Compose[T any]() *Pipeline[T] {
	c := compose.New[T]()
	return (*Pipeline[T])(&c)
}

func (p *Pipeline[T]) orEmpty() *Pipeline[T] {
	if p == nil {
		return Compose[T]()
	}
	return p
}

func (p *Pipeline[T]) with(l compose.Layer[T]) *Pipeline[T] {
	c := p.orEmpty().chain().With(l)
	return (*Pipeline[T])(&c)
}

// WithBulkhead returns p wrapped in bh: the call holds one bulkhead permit while everything
// added before runs. A nil bh adds nothing.
func (p *Pipeline[T]) WithBulkhead(bh *bulkhead.Bulkhead) *Pipeline[T] {
	if bh == nil {
		return p.orEmpty()
	}
	return p.with(compose.Bulkhead[T](bh))
}

// WithTimeLimiter returns p wrapped in tl: everything added before runs with its own deadline
// and the caller gets timelimiter.ErrTimeout at the deadline. A nil tl adds nothing.
func (p *Pipeline[T]) WithTimeLimiter(tl *timelimiter.TimeLimiter) *Pipeline[T] {
	if tl == nil {
		return p.orEmpty()
	}
	return p.with(compose.TimeLimiter[T](tl))
}

// WithRateLimiter returns p wrapped in rl: each run of what was added before takes one
// permission. A nil rl adds nothing.
func (p *Pipeline[T]) WithRateLimiter(rl *ratelimiter.RateLimiter) *Pipeline[T] {
	if rl == nil {
		return p.orEmpty()
	}
	return p.with(compose.RateLimiter[T](rl))
}

// WithPermissionLimiter returns p wrapped in l, a rate limiter of any kind (a PermissionLimiter):
// each run of what was added before takes one permission, as WithRateLimiter. A
// *ratelimiter.RateLimiter passed here gets WithRateLimiter's layer, which allocates nothing;
// another limiter costs what its AcquirePermission costs. A nil l, or an l holding a nil
// pointer (a *leveeredis.RateLimiter left nil), adds nothing, as a nil pattern does.
func (p *Pipeline[T]) WithPermissionLimiter(l PermissionLimiter) *Pipeline[T] {
	if isNil(l) {
		return p.orEmpty()
	}
	if rl, ok := l.(*ratelimiter.RateLimiter); ok {
		return p.WithRateLimiter(rl)
	}
	return p.with(compose.Permissions[T](l))
}

// WithAdmission returns p wrapped in a, in a circuit breaker's place: each run of what was
// added before asks a for a permit and ends it with the run's outcome (OnSuccess, OnError with
// the error or a panic's *PanicError, Release when the caller's own context ended the run). A
// refusal returns a's error and runs nothing inside. Use it for a breaker shared by a fleet or
// client-side throttling (throttle.Throttler); inside a Retry each attempt is one call. A nil
// a, or an a holding a nil pointer, adds nothing.
func (p *Pipeline[T]) WithAdmission(a Admitter) *Pipeline[T] {
	if isNil(a) {
		return p.orEmpty()
	}
	return p.with(compose.Admission[T](a))
}

// WithConcurrencyLimiter returns p wrapped in l, in a bulkhead's place: each run of what was
// added before holds one permit of l while it runs and ends it with the run's outcome, as
// WithAdmission. Use it for an adaptive limit (adaptive.Limiter, adaptive.PartitionedLimiter),
// which learns from the run's latency. A nil l, or an l holding a nil pointer, adds nothing.
func (p *Pipeline[T]) WithConcurrencyLimiter(l Admitter) *Pipeline[T] {
	return p.WithAdmission(l)
}

// isNil reports whether v is nil or holds a nil pointer, map, slice, channel or function: a
// pattern left unset in a role's field, which the pipeline leaves out rather than calling.
// It runs once per layer built, never per call.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Chan, reflect.Func, reflect.Interface:
		return r.IsNil()
	}
	return false
}

// WithCircuitBreaker returns p wrapped in cb: each run of what was added before is one call
// for the breaker. A nil cb adds nothing.
func (p *Pipeline[T]) WithCircuitBreaker(cb *circuitbreaker.CircuitBreaker) *Pipeline[T] {
	if cb == nil {
		return p.orEmpty()
	}
	return p.with(compose.CircuitBreaker[T](cb))
}

// WithRetry returns p wrapped in r: what was added before is attempted up to r's MaxAttempts
// times. A nil r adds nothing.
func (p *Pipeline[T]) WithRetry(r *retry.Retry) *Pipeline[T] {
	if r == nil {
		return p.orEmpty()
	}
	return p.with(compose.Retry[T](r))
}

// WithFallback returns p wrapped in f: f answers the failures of what was added before. Added
// last, it answers only once everything inside has given up; added before a retry, the retry
// sees its answers as successes and never retries (Resilience4j's fallbackMethod on
// @CircuitBreaker does the same; the order written is the order run). A nil f adds nothing.
func (p *Pipeline[T]) WithFallback(f *fallback.Fallback[T]) *Pipeline[T] {
	if f == nil {
		return p.orEmpty()
	}
	return p.with(compose.Fallback[T](f))
}

// Decorator is a layer of a Pipeline written outside levee: a middleware that receives the
// call's context and next, everything added to the pipeline before it, and returns the layer's
// result. It may run next once (as a pattern guarding the call does), several times, never
// (answering or refusing itself), or after doing something else first; it must honour ctx and
// must not run next after it has returned. Fault injection (package chaos) and decorators of
// one's own are added with Pipeline.With. Resilience4j's counterpart is Decorators' withX
// taking a custom decorator function.
//
// Decorator is an alias of its function type, so that a pattern package below levee (adaptive,
// chaos) can return a Decorator without importing levee: any function of this signature is a
// Decorator as it is.
type Decorator[T any] = func(ctx context.Context, next func(context.Context) (T, error)) (T, error)

// With returns p wrapped in d, as the other With... methods wrap p in a pattern: d receives
// everything added before as next, and the layers added after see d's result as the call's.
// A panic in d, or in next when d is the innermost layer, becomes a *PanicError as in every
// other layer. A fallback inside d reports its answer to ExecuteOutcome; when d runs next more
// than once, only the run that ends last counts, and d may run next on several goroutines at
// once. Each run of d allocates once, 80 bytes, since next escapes to a function levee cannot
// see into (ExecuteOutcome one more, and one per run of next); levee's own patterns allocate
// nothing. A nil d adds nothing.
func (p *Pipeline[T]) With(d Decorator[T]) *Pipeline[T] {
	if d == nil {
		return p.orEmpty()
	}
	return p.with(compose.Decorator[T](d))
}

// Execute runs call through the pipeline and returns what the outermost layer returns. A nil
// ctx is treated as context.Background(); a nil call returns ErrNilCall before any pattern
// sees it (no breaker records it, no retry repeats it, no fallback answers it). The success path allocates nothing unless the pipeline holds a TimeLimiter, but a
// closure passed as call escapes to the heap (a time limiter may run it on a goroutine that
// outlives Execute): pass a function value made once, such as a method value stored at
// start-up, where that allocation matters.
func (p *Pipeline[T]) Execute(ctx context.Context, call Call[T]) (T, error) {
	return p.chain().Execute(ctx, call)
}

// ExecuteOutcome is Execute that also reports whether a fallback answered: Outcome.Fallback is
// true when the value returned is a fallback's answer, and Outcome.Cause is the error it
// answered. Inside a Retry, only the attempt whose result is returned counts.
func (p *Pipeline[T]) ExecuteOutcome(ctx context.Context, call Call[T]) (T, fallback.Outcome, error) {
	return p.chain().ExecuteOutcome(ctx, call)
}
