package timelimiter

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/levee-go/levee/internal/safe"
	"github.com/levee-go/levee/internal/tracker"
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
// A result wins over the deadline and over the end of ctx if the call's goroutine has stored
// it by the time Execute decides, which it does once, on waking up: a call that returned "ok"
// before its caller cancelled comes back as "ok" with a SUCCESS event. The one window left is
// the call's own return: from the call's return statement to its goroutine storing the result
// (two stores and a compare-and-swap, during which the goroutine can still be preempted), the
// result does not exist for Execute. Finding the call still running, Execute yields the
// processor up to three times before deciding, so that a call caught in that window almost
// always stores its result first; a result stored after Execute has decided is dropped, as
// that of any call whose caller stopped waiting.
//
// attemptCtx is cancelled as soon as the call returns, whatever the outcome, which releases its
// timer. A nil ctx means context.Background(); a nil call returns levee.ErrNilCall and a nil tl
// returns ErrNilTimeLimiter, without starting anything.
func Execute[T any](ctx context.Context, tl *TimeLimiter, call func(context.Context) (T, error)) (T, error) {
	var zero T
	if tl.unset() {
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
	cfg := tl.config.Load() // the call keeps this config to its end, whatever ChangeConfig does
	a := &attempt[T]{tl: tl, timeout: cfg.TimeoutDuration, cancelRunning: !cfg.DisableCancelRunningFuture,
		call: call, tr: tracker.From(ctx)}
	var deadline <-chan time.Time
	if a.cancelRunning {
		a.ctx, a.cancel = context.WithTimeout(ctx, a.timeout)
	} else {
		// The attempt's context must outlive the deadline, so the deadline is a timer of
		// the caller's own.
		a.ctx, a.cancel = context.WithCancel(ctx)
		timer := time.NewTimer(a.timeout)
		defer timer.Stop()
		deadline = timer.C
	}
	a.tr.Start() // an operator above waits for the goroutine, abandoned or not
	go a.run()
	// a.ctx ends when the call returns (run cancels it), at the deadline when it carries
	// it, or when ctx ends. Whichever woke us, outcome reads the attempt's state, not which
	// channel was ready: a select choosing at random between a stored result and ctx.Done
	// would drop the result half the time.
	select {
	case <-a.ctx.Done():
	case <-deadline:
	}
	return a.outcome(ctx, start)
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
	state atomic.Int32
	tl    *TimeLimiter
	// timeout and cancelRunning are the limiter's config when the call started.
	timeout       time.Duration
	cancelRunning bool
	call          func(context.Context) (T, error)
	ctx           context.Context
	cancel        context.CancelFunc
	tr            *tracker.Tracker // the caller's operator's, if any: counts the goroutine
	v             T                // written by the goroutine before state leaves running
	err           error            // likewise
}

// run makes the call and stores its result. The store comes right after the call's return,
// before anything else, to keep the window described in Execute as short as it can be.
func (a *attempt[T]) run() {
	stored := false
	defer func() {
		if !stored { // the call panicked, or called runtime.Goexit (recover returns nil)
			var zero T
			a.v, a.err = zero, errExited
			if r := recover(); r != nil {
				a.err = safe.NewPanicError(r)
			}
			a.settle()
		}
	}()
	a.v, a.err = a.call(a.ctx)
	stored = true
	a.settle()
}

// settle publishes the stored result, unless the caller has already gone. The call and the
// layers inside the limiter have all returned: the tracker counts the call no more before the
// caller is woken, so whoever receives the result never sees it still running.
func (a *attempt[T]) settle() {
	if !a.state.CompareAndSwap(running, returned) {
		a.tl.abandoned.Add(-1) // the caller has gone: the result is dropped
	}
	a.tr.Done()
	a.cancel() // wakes the caller, releases the timer, and ends the attempt's context
}

// returnYields is how many times the caller yields to a call still running when it wakes up.
// Under 5,000 parallel calls with the race detector on two cores, one yield still lost about
// one result per 10,000 calls cancelled as they returned; three lost none in 50,000.
const returnYields = 3

// pastDeadline reports whether the attempt's own deadline has fired or passed. The attempt's
// context is cancelled once the call returns, so its Err alone would say Canceled for a call
// that returned at its deadline before the timer fired.
func (a *attempt[T]) pastDeadline(start time.Time) bool {
	if a.ctx.Err() == context.DeadlineExceeded {
		return true
	}
	return a.cancelRunning && time.Since(start) >= a.timeout
}

// outcome decides, once the caller has woken up, what it returns.
func (a *attempt[T]) outcome(ctx context.Context, start time.Time) (T, error) {
	var zero T
	tl := a.tl
	// Count the abandonment before announcing it, so the goroutine's decrement can never
	// come first and make the gauge negative.
	tl.abandoned.Add(1)
	for i := 0; i < returnYields && a.state.Load() == running; i++ {
		// Give a call that is returning right now (see Execute) the chance to store its
		// result: on a busy machine its goroutine may have been preempted just after the
		// call's return. Only the deadline and the caller's cancellation get here.
		runtime.Gosched()
	}
	if a.state.CompareAndSwap(running, abandoned) {
		if err := ctx.Err(); err != nil {
			return zero, err // the caller's own cancellation
		}
		return zero, tl.recordTimeout(a.timeout, time.Since(start), nil)
	}
	tl.abandoned.Add(-1)

	v, err := a.v, a.err
	switch {
	case err == nil:
		tl.OnSuccess(time.Since(start))
		return v, nil
	case safe.CallerCancelled(ctx, err):
		return v, err
	case a.pastDeadline(start) && safe.Is(err, context.DeadlineExceeded):
		// The attempt's deadline has passed and the call reports it: that is this limiter's
		// timeout, whichever goroutine the scheduler ran first, and even when the call saw the
		// deadline pass (a server answering to the same deadline) before the context's timer
		// fired.
		return zero, tl.recordTimeout(a.timeout, time.Since(start), err)
	default:
		tl.onError(time.Since(start), err)
		return v, err
	}
}
