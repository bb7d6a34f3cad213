package leveeredis

import (
	"context"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/internal/safe"
)

// ExecuteRateLimiter runs call with one permission of rl, as ratelimiter.Execute (Resilience4j's
// RateLimiter.executeCallable): when AcquirePermission refuses or ctx ends first, call is not
// run and that error is returned; otherwise call's result and error, unchanged. A panic in call
// is returned as a *levee.PanicError. A nil ctx is Background; a nil call returns
// levee.ErrNilCall without taking a permission.
func ExecuteRateLimiter[T any](ctx context.Context, rl *RateLimiter, call func(context.Context) (T, error)) (T, error) {
	var zero T
	if call == nil {
		return zero, levee.ErrNilCall
	}
	ctx = safe.Ctx(ctx)
	if err := rl.AcquirePermission(ctx, 1); err != nil {
		return zero, err
	}
	return safe.Call(ctx, call)
}

// RateLimiterDecorator returns rl as a layer of a levee.Pipeline (Pipeline.With): each run of what was
// added before takes one permission of the shared limit, as Pipeline.WithRateLimiter does with
// a local limiter:
//
//	p := levee.Compose[Receipt]().WithCircuitBreaker(cb).With(leveeredis.RateLimiterDecorator[Receipt](rl))
func RateLimiterDecorator[T any](rl *RateLimiter) levee.Decorator[T] {
	return func(ctx context.Context, next func(context.Context) (T, error)) (T, error) {
		if err := rl.AcquirePermission(ctx, 1); err != nil {
			var zero T
			return zero, err
		}
		return next(ctx)
	}
}
