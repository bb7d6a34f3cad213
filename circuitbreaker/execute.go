package circuitbreaker

import (
	"context"
	"time"

	"github.com/levee-go/levee/internal/safe"
)

// Execute runs call through cb, as Resilience4j's decorateCheckedSupplier with levee's
// guarantees:
//
//   - a refused call is not run and returns a *CallNotPermittedError;
//   - the elapsed time is measured around call on the monotonic clock (two readings of
//     it, as time.Since makes) and decides whether it was slow;
//   - a nil error records a success, or a failure when RecordResultPredicate matches the
//     value (which is still returned);
//   - an error is classified as OnError describes and returned unchanged;
//   - the caller's own cancellation (ctx done and the error matching ctx.Err()) records
//     nothing and hands the permission back;
//   - a panic in call is recorded as a failure and returned as a *levee.PanicError;
//   - a call that ends its goroutine with runtime.Goexit records nothing and hands the
//     permission back, as a cancelled one.
//
// Every outcome is counted once, and a HALF_OPEN permit is only ever handed back to the
// HALF_OPEN period that granted it, so a late call cannot inflate a later period's budget.
// A nil ctx means context.Background(); a nil call returns levee.ErrNilCall and a nil cb
// ErrNilCircuitBreaker, without running anything. Execute holds no lock while call runs,
// does not retain call, and does not allocate on the success path when no one subscribes and
// RecordResultPredicate is nil.
func Execute[T any](ctx context.Context, cb *CircuitBreaker, call func(context.Context) (T, error)) (T, error) {
	var zero T
	if cb == nil {
		return zero, ErrNilCircuitBreaker
	}
	if call == nil {
		return zero, safe.ErrNilCall
	}
	ctx = safe.Ctx(ctx)
	granted, ok := cb.acquire()
	if !ok {
		return zero, cb.notPermitted(granted)
	}
	// safe.Call turns a panic into an error, so the only way out of call without returning is
	// runtime.Goexit (t.FailNow in a test, for instance). Such a call told nothing about the
	// dependency: like a cancelled one, it hands its permission back unrecorded. The deferred
	// closure stays on the stack (an open-coded defer), so it allocates nothing.
	exited := true
	defer func() {
		if exited {
			granted.release()
		}
	}()
	start := monotonic()
	v, err := safe.Call(ctx, call)
	d := monotonic() - start
	exited = false
	switch {
	case err == nil:
		if cb.cfg.RecordResultPredicate != nil {
			cb.returned(d, v)
		} else {
			cb.succeeded(d)
		}
	case safe.CallerCancelled(ctx, err):
		granted.release()
	default:
		cb.failed(granted, d, err)
	}
	return v, err
}

// clockBase anchors monotonic. Only differences of two readings are used, so its value does not
// matter.
var clockBase = time.Now()

// monotonic reads the monotonic clock alone. time.Now would also read the wall clock, a second
// clock read that Execute has no use for and that costs as much as the first one. In a
// testing/synctest bubble time.Since follows the bubble's clock, so durations measured there
// follow the fake time as before.
func monotonic() time.Duration { return time.Since(clockBase) }

// Decorate returns call guarded by cb: each invocation of the result is one Execute.
func Decorate[T any](cb *CircuitBreaker, call func(context.Context) (T, error)) func(context.Context) (T, error) {
	return func(ctx context.Context) (T, error) { return Execute(ctx, cb, call) }
}
