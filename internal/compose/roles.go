package compose

import (
	"context"
	"time"

	"github.com/levee-go/levee/internal/safe"
)

// Permissioner is levee.PermissionLimiter: a rate limiter of any kind.
type Permissioner interface {
	AcquirePermission(ctx context.Context, n int) error
}

// Admitter is levee.Admitter: a pattern that admits each call with a permit it learns from.
type Admitter interface {
	Admit(ctx context.Context) (interface {
		OnSuccess()
		OnError(err error)
		Release()
	}, error)
}

// retryAdvisor is levee.RetryAdvisor.
type retryAdvisor interface {
	RetryAfter() time.Duration
}

// releaseNotifier is levee.ReleaseNotifier: a limiter or admitter that tells when a permit
// comes free.
type releaseNotifier interface {
	NotifyRelease(wake func()) (stop func())
}

// Permissions is a layer that takes one permission of l per run of the layers inside it, as
// RateLimiter does for levee's own limiter.
func Permissions[T any](l Permissioner) Layer[T] { return Layer[T]{kind: kindPermissions, pl: l} }

// Admission is a layer that runs the layers inside it with a permit of a, ended with their
// outcome.
func Admission[T any](a Admitter) Layer[T] { return Layer[T]{kind: kindAdmission, ad: a} }

// execPermitted takes one permission of l, then runs next.
func execPermitted[T any](ctx context.Context, l Permissioner, next func(context.Context) (T, error)) (T, error) {
	if err := l.AcquirePermission(ctx, 1); err != nil {
		var zero T
		return zero, err
	}
	return safe.Call(ctx, next)
}

// execAdmitted runs next under a permit of a and ends the permit with its outcome: Release
// for the caller's own cancellation, OnError for a failure (a panic included, as the
// *PanicError it becomes), OnSuccess otherwise.
func execAdmitted[T any](ctx context.Context, a Admitter, next func(context.Context) (T, error)) (T, error) {
	p, err := a.Admit(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := safe.Call(ctx, next)
	switch {
	case err == nil:
		p.OnSuccess()
	case safe.CallerCancelled(ctx, err):
		p.Release()
	default:
		p.OnError(err)
	}
	return v, err
}
