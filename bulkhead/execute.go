package bulkhead

import (
	"context"

	"github.com/levee-go/levee/internal/callobs"
	"github.com/levee-go/levee/internal/safe"
)

// Execute runs call under a permit of b, as Resilience4j's Bulkhead.executeCallable: it
// acquires a permit (see Acquire for the waiting rules and the errors), runs call(ctx), gives
// the permit back and returns call's value and error unchanged.
//
// The permit is given back exactly once however the call ends: Release (CALL_FINISHED) after a
// success, an error or a panic, ReleasePermission (no event) when the caller's own context
// ended the call (ctx is done and the error matches ctx.Err()). A panic in call comes back as
// a *levee.PanicError. A nil ctx means context.Background(); a nil call returns levee.ErrNilCall
// and a nil b returns ErrNilBulkhead, both without taking a permit.
//
// With no event subscriber, Execute allocates nothing when a permit is free, and it does not
// retain call.
func Execute[T any](ctx context.Context, b *Bulkhead, call func(context.Context) (T, error)) (T, error) {
	var zero T
	if b.unset() {
		return zero, ErrNilBulkhead
	}
	if call == nil {
		return zero, safe.ErrNilCall
	}
	ctx = safe.Ctx(ctx)
	if err := b.Acquire(ctx); err != nil {
		if !safe.CallerCancelled(ctx, err) {
			callobs.Report(ctx, callobs.Event{Kind: callobs.Rejection, Pattern: "bulkhead", Name: b.name, Err: err})
		}
		return zero, err
	}
	// safe.Call turns a panic into an error, so the only way out of call without returning is
	// runtime.Goexit (t.FailNow in a test, for instance): the deferred release covers it.
	returned := false
	defer func() {
		if !returned {
			b.ReleasePermission()
		}
	}()
	v, err := safe.Call(ctx, call)
	returned = true
	if safe.CallerCancelled(ctx, err) {
		b.ReleasePermission()
	} else {
		b.Release()
	}
	return v, err
}
