package ratelimiter

import (
	"context"

	"github.com/levee-go/levee/internal/callobs"
	"github.com/levee-go/levee/internal/safe"
)

// Execute runs call with one permission of rl, as Resilience4j's
// RateLimiter.executeCallable: it obtains the permission with AcquirePermission (waiting for a
// reserved one when the wait fits in TimeoutDuration), runs call(ctx), then reports the outcome
// with OnResult or OnError so that Config.DrainPermissionsOnResult may drain the cycle.
//
// Errors: the refusal (*RequestNotPermittedError, matching ErrRequestNotPermitted) or ctx's error
// when no permission was obtained, and call is not run; otherwise call's own error, unchanged. A
// panic in call is returned as a *levee.PanicError and reported to OnError like any error. A call
// that fails with the caller's own cancellation (ctx done, the error matching ctx.Err()) is not
// reported. A nil ctx is Background; a nil call returns levee.ErrNilCall and a nil rl
// ErrNilRateLimiter, without taking a permission. When nothing subscribes and
// DrainPermissionsOnResult is nil, Execute allocates nothing unless it has to wait.
func Execute[T any](ctx context.Context, rl *RateLimiter, call func(context.Context) (T, error)) (T, error) {
	var zero T
	if rl.unset() {
		return zero, ErrNilRateLimiter
	}
	if call == nil {
		return zero, safe.ErrNilCall
	}
	ctx = safe.Ctx(ctx)
	if err := rl.AcquirePermission(ctx, 1); err != nil {
		if !safe.CallerCancelled(ctx, err) {
			callobs.Report(ctx, callobs.Event{Kind: callobs.Rejection, Pattern: "ratelimiter", Name: rl.name, Err: err})
		}
		return zero, err
	}
	v, err := safe.Call(ctx, call)
	if rl.drain == nil {
		return v, err // nothing to evaluate; skipping OnResult also avoids boxing v
	}
	switch {
	case err == nil:
		rl.OnResult(v)
	case !safe.CallerCancelled(ctx, err):
		rl.OnError(err)
	}
	return v, err
}
