package circuitbreaker

import (
	"context"
	"time"

	"github.com/levee-go/levee/internal/callobs"
	"github.com/levee-go/levee/internal/safe"
)

// Execute runs call through cb, as Resilience4j's decorateCheckedSupplier, on a Permit:
//
//   - a refused call is not run and returns a *CallNotPermittedError;
//   - the elapsed time is measured around call on the monotonic clock and decides whether it
//     was slow (with the precision the package comment's "Timing" gives: exact below a
//     SlowCallDurationThreshold of 1 s, within 1 ms from 1 s up);
//   - a nil error records a success, or a failure when RecordResultPredicate matches the
//     value (which is still returned);
//   - an error is classified as Permit.OnError describes and returned unchanged;
//   - the caller's own cancellation (ctx done and the error matching ctx.Err()) records
//     nothing and releases the permit; so does an error matching context.DeadlineExceeded
//     once ctx's deadline has passed, even an instant before ctx.Err() is set (the call's
//     own timer may fire before the context's): the caller's own deadline is nobody's
//     failure at every instant;
//   - a panic in call is recorded as a failure and returned as a *levee.PanicError;
//   - a call that ends its goroutine with runtime.Goexit records nothing and releases the
//     permit, as a cancelled one.
//
// A ctx already done returns ctx.Err() without taking a permit, running call or recording
// anything, as Retry, Bulkhead and RateLimiter do. A nil ctx means context.Background(); a nil
// call returns levee.ErrNilCall and a nil cb ErrNilCircuitBreaker, without running anything. Execute holds no lock while call runs,
// does not retain call, and does not allocate on the success path when no one subscribes and
// RecordResultPredicate and TransitionOnResult are nil.
func Execute[T any](ctx context.Context, cb *CircuitBreaker, call func(context.Context) (T, error)) (v T, err error) {
	if cb == nil {
		return v, ErrNilCircuitBreaker
	}
	if call == nil {
		return v, safe.ErrNilCall
	}
	ctx = safe.Ctx(ctx)
	// CLOSED, by far the most common state, is decided inline, and the permit's fields are set
	// one by one rather than copied from acquire's result.
	before := cb.state.Load()
	if before == nil { // a zero CircuitBreaker that New never built answers as nil
		return v, ErrNilCircuitBreaker
	}
	if err := ctx.Err(); err != nil {
		return v, err // the caller is gone: nothing to ask the dependency, nothing to record
	}
	var p Permit
	if before.kind == Closed {
		p.cb, p.st = cb, before
	} else if p = cb.acquireFrom(before); p.cb == nil {
		return v, cb.refuse(ctx, p.st)
	}

	// One deferred closure (open-coded, so it allocates nothing) covers both ways out of call
	// without returning: a panic is recorded as a failure and returned as a *levee.PanicError;
	// runtime.Goexit (t.FailNow in a test, for instance) told nothing about the dependency
	// and, like a cancelled call, releases its permit unrecorded.
	returned := false
	defer func() {
		if returned {
			return
		}
		if r := recover(); r != nil {
			var zero T
			v, err = zero, safe.NewPanicError(r)
			end := cb.end(p.st)
			cb.failed(p, end-p.start, end, nil, err)
			return
		}
		p.release()
	}()
	p.start = cb.begin(p.st)
	v, err = call(ctx)
	end := cb.end(p.st)
	d := end - p.start
	returned = true
	switch {
	case err == nil:
		if p.st.set.plain {
			if p.finish() {
				cb.succeeded(p.st, d, end)
			}
		} else if p.finish() {
			cb.transitionOnResult(p, cb.returned(p.st, d, end, v), v, nil)
		}
	case safe.CallerCancelled(ctx, err) || deadlinePassed(ctx, err):
		p.release()
	default:
		if p.st.set.cfg.TransitionOnResult == nil {
			cb.failed(p, d, end, nil, err)
		} else {
			cb.failed(p, d, end, v, err)
		}
	}
	// A transition during the call is reported to the call's observer: one atomic load to
	// see whether the state changed, and the context is looked at only when it did.
	if after := cb.state.Load(); after != before && after.kind != before.kind {
		cb.reportTransition(ctx, before.kind, after.kind)
	}
	return v, err
}

// refuse returns the error of a call refused by period st and tells the call's observer. It
// is kept out of Execute, whose frame it would enlarge for every call.
func (cb *CircuitBreaker) refuse(ctx context.Context, st *circuitState) error {
	err := cb.notPermitted(st)
	if o := callobs.From(ctx); o != nil {
		o.OnCallEvent(ctx, callobs.Event{Kind: callobs.Rejection, Pattern: "circuitbreaker", Name: cb.name, Err: err})
	}
	return err
}

// reportTransition tells the call's observer that the breaker moved from one state to another
// during the call.
func (cb *CircuitBreaker) reportTransition(ctx context.Context, from, to State) {
	callobs.Report(ctx, callobs.Event{Kind: callobs.Transition, Pattern: "circuitbreaker", Name: cb.name, From: from.String(), To: to.String()})
}

// deadlinePassed reports whether err is a deadline's and ctx's own deadline has passed: the
// caller's deadline, though ctx.Err() may not be set yet.
func deadlinePassed(ctx context.Context, err error) bool {
	dl, ok := ctx.Deadline()
	return ok && !time.Now().Before(dl) && safe.Is(err, context.DeadlineExceeded)
}
