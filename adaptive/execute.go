package adaptive

import (
	"context"

	"github.com/levee-go/levee/internal/safe"
)

// Execute runs call under a permit of l: it acquires one (see Acquire for the queueing rules
// and the errors), runs call(ctx), ends the permit and returns call's value and error
// unchanged. The outcome teaches the limiter as Permit.Record says, except that an error
// matching ctx's own end (the caller cancelled, or its deadline passed) is ignored rather than
// counted as a drop: the dependency did not cause it. A panic in call ends the permit and
// comes back as a *levee.PanicError. A nil ctx means context.Background(); a nil call returns
// levee.ErrNilCall and a nil l returns ErrNilLimiter, both without taking a permit.
//
// With no event subscriber, Execute allocates nothing, whether the call is admitted or
// refused, unless it queues; it does not retain call.
func Execute[T any](ctx context.Context, l *Limiter, call func(context.Context) (T, error)) (T, error) {
	var zero T
	if l.unset() {
		return zero, ErrNilLimiter
	}
	if call == nil {
		return zero, safe.ErrNilCall
	}
	ctx = safe.Ctx(ctx)
	p, err := l.Acquire(ctx)
	if err != nil {
		return zero, err
	}
	return runPermit(ctx, p, call)
}

// Decorator returns l as a layer for levee.Pipeline.With, in any position: each run of the
// layer is one Execute(ctx, l, next), so every call, stream element or future the pipeline
// guards takes a permit of l. Placed inside a Retry, each attempt takes its own permit; placed
// inside a CircuitBreaker, a refusal is a levee rejection the breaker does not record. A nil l
// returns a nil levee.Decorator, which With skips.
//
//	p := levee.Compose[Quote]().With(adaptive.Decorator[Quote](limiter)).WithCircuitBreaker(cb)
func Decorator[T any](l *Limiter) func(ctx context.Context, next func(context.Context) (T, error)) (T, error) {
	if l.unset() {
		return nil
	}
	return func(ctx context.Context, next func(context.Context) (T, error)) (T, error) {
		return Execute(ctx, l, next)
	}
}
