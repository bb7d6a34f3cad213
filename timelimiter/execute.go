package timelimiter

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/levee-go/levee/internal/safe"
)

// Execute runs call(attemptCtx) in a goroutine of its own, with attemptCtx derived from ctx,
// and waits at most TimeoutDuration for it, as Resilience4j's TimeLimiter.executeFutureSupplier.
//
//   - The call returns in time: its value and error come back unchanged (SUCCESS or ERROR
//     event); a panic comes back as a *levee.PanicError.
//   - TimeoutDuration passes first: Execute returns the zero value and a *TimeoutError at the
//     deadline (TIMEOUT event), and attemptCtx is cancelled unless DisableCancelRunningFuture.
//     The call goes on in its goroutine until it returns (counted meanwhile in
//     NumberOfAbandonedCalls); its result is dropped.
//   - ctx ends first: Execute returns an error matching ctx.Err() at once; no event, nothing
//     counted. A ctx that has already ended when Execute is called does not start the call.
//
// attemptCtx is cancelled as soon as the call returns, whatever the outcome, which releases its
// timer. A nil ctx means context.Background(); a nil call returns levee.ErrNilCall and a nil tl
// returns ErrNilTimeLimiter, without starting anything.
func Execute[T any](ctx context.Context, tl *TimeLimiter, call func(context.Context) (T, error)) (T, error) {
	var zero T
	if tl == nil {
		return zero, ErrNilTimeLimiter
	}
	if call == nil {
		return zero, safe.ErrNilCall
	}
	ctx = safe.Ctx(ctx)
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	start := time.Now()
	a := &attempt[T]{tl: tl, call: call}
	var deadline <-chan time.Time
	if tl.cancelRunning {
		a.ctx, a.cancel = context.WithTimeout(ctx, tl.timeout)
	} else {
		// The attempt's context must outlive the deadline, so the deadline is a timer of
		// the caller's own.
		a.ctx, a.cancel = context.WithCancel(ctx)
		timer := time.NewTimer(tl.timeout)
		defer timer.Stop()
		deadline = timer.C
	}
	go a.run()
	// a.ctx ends when the call returns (run cancels it), at the deadline when it carries
	// it, or when ctx ends.
	select {
	case <-a.ctx.Done():
	case <-deadline:
	}
	return a.outcome(ctx, start)
}

// Decorate returns a function that runs call through Execute with tl at each invocation.
// Decorate itself never fails: a nil tl or call is reported by each invocation.
func Decorate[T any](tl *TimeLimiter, call func(context.Context) (T, error)) func(context.Context) (T, error) {
	return func(ctx context.Context) (T, error) { return Execute(ctx, tl, call) }
}

// The states of an attempt. The caller and the call's goroutine each try to move the attempt
// out of running exactly once; whoever succeeds decides whether the result is used or dropped,
// so an attempt has exactly one outcome even when the call returns at its deadline.
const (
	running int32 = iota
	returned
	abandoned
)

// errExited stands for the result of a call that left its goroutine by runtime.Goexit.
var errExited = errors.New("timelimiter: call exited without returning")

// attempt is what the caller and the call's goroutine share for one execution.
type attempt[T any] struct {
	state  atomic.Int32
	tl     *TimeLimiter
	call   func(context.Context) (T, error)
	ctx    context.Context
	cancel context.CancelFunc
	v      T     // written by the goroutine before state leaves running
	err    error // likewise
}

func (a *attempt[T]) run() {
	a.err = errExited // replaced below unless the call calls runtime.Goexit
	defer a.finish()
	a.v, a.err = safe.Call(a.ctx, a.call)
}

func (a *attempt[T]) finish() {
	if !a.state.CompareAndSwap(running, returned) {
		a.tl.abandoned.Add(-1) // the caller has gone: the result is dropped
	}
	a.cancel() // wakes the caller, releases the timer, and ends the attempt's context
}

// outcome decides, once the caller has woken up, what it returns.
func (a *attempt[T]) outcome(ctx context.Context, start time.Time) (T, error) {
	var zero T
	tl := a.tl
	// Count the abandonment before announcing it, so the goroutine's decrement can never
	// come first and make the gauge negative.
	tl.abandoned.Add(1)
	if a.state.CompareAndSwap(running, abandoned) {
		if err := ctx.Err(); err != nil {
			return zero, err // the caller's own cancellation
		}
		return zero, tl.recordTimeout(time.Since(start), nil)
	}
	tl.abandoned.Add(-1)

	v, err := a.v, a.err
	switch {
	case err == nil:
		tl.OnSuccess(time.Since(start))
		return v, nil
	case safe.CallerCancelled(ctx, err):
		return v, err
	case a.ctx.Err() == context.DeadlineExceeded && safe.Is(err, context.DeadlineExceeded):
		// The attempt's deadline fired before the call returned, and the call reports it:
		// that is this limiter's timeout, whichever goroutine the scheduler ran first.
		return zero, tl.recordTimeout(time.Since(start), err)
	default:
		tl.onError(time.Since(start), err)
		return v, err
	}
}
