package adaptive

import (
	"context"

	"github.com/levee-go/levee/internal/safe"
)

// ExecutePartitioned runs call under a permit of l for the partition ctx names
// (WithPartition), as Execute does for a Limiter: the same errors, the same classification of
// the outcome, a panic ended as a *levee.PanicError. A nil l returns ErrNilLimiter and a nil
// call levee.ErrNilCall, both without taking a permit. With no RejectionDelay to wait out it
// allocates nothing.
func ExecutePartitioned[T any](ctx context.Context, l *PartitionedLimiter, call func(context.Context) (T, error)) (T, error) {
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

// runPermit runs call under p and ends p by the outcome: Record of its error, or OnIgnore when
// the caller's own cancellation or deadline ended it. safe.Call turns a panic into an error, so
// the only way out of call without returning is runtime.Goexit (t.FailNow in a test, for
// instance): the deferred end covers it.
func runPermit[T any](ctx context.Context, p Permit, call func(context.Context) (T, error)) (T, error) {
	returned := false
	defer func() {
		if !returned {
			p.OnIgnore()
		}
	}()
	v, err := safe.Call(ctx, call)
	returned = true
	if safe.CallerEnded(ctx, err) {
		p.OnIgnore()
	} else {
		p.Record(err)
	}
	return v, err
}

// PartitionedDecorator returns l as a layer for levee.Pipeline.With: each run is one
// ExecutePartitioned(ctx, l, next), the partition read from the call's context. A nil l
// returns a nil Decorator, which With skips.
func PartitionedDecorator[T any](l *PartitionedLimiter) func(ctx context.Context, next func(context.Context) (T, error)) (T, error) {
	if l.unset() {
		return nil
	}
	return func(ctx context.Context, next func(context.Context) (T, error)) (T, error) {
		return ExecutePartitioned(ctx, l, next)
	}
}

// PrioritizedDecorator returns l behind p as a layer for levee.Pipeline.With: each run is one
// ExecutePrioritized(ctx, p, l, next), the level read from the call's context. A nil l
// returns a nil Decorator, which With skips; a nil p is Decorator(l).
func PrioritizedDecorator[T any](p *Prioritizer, l *Limiter) func(ctx context.Context, next func(context.Context) (T, error)) (T, error) {
	if l.unset() {
		return nil
	}
	return func(ctx context.Context, next func(context.Context) (T, error)) (T, error) {
		return ExecutePrioritized(ctx, p, l, next)
	}
}
