package async

import (
	"context"
	"sync/atomic"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/internal/safe"
)

// Result is what one guarded call completed with: its value or error, and whether a fallback of
// its pipeline produced them.
type Result[T any] struct {
	// Value is the call's value, or the fallback's answer when Outcome.Fallback is true.
	Value T
	// Err is the call's error, or the fallback's when the fallback failed; nil on success and
	// when a fallback answered.
	Err error
	// Outcome tells a fallback's answer from a live one: Outcome.Fallback is true when a
	// fallback handler answered with Value, and Outcome.Cause is the error it answered (a
	// handler that failed leaves it false and its *fallback.Error in Err).
	Outcome fallback.Outcome
}

// Future is the result of a guarded call running in a goroutine of its own, started by Go,
// GoLazy or Submit. It completes exactly once, with the call's value, its error, or its
// pipeline's fallback answer (marked in Outcome), and only once the guarded execution has
// returned, so that every permit the call took (breaker, bulkhead, rate limiter) has been
// released or recorded by then — except what lies inside a TimeLimiter of the pipeline that
// gave up on the call: the future completes with the timeout at the deadline (that is what
// the limiter is for), while the call, if it ignores its context, goes on and holds the
// permits taken inside the limiter (in levee.DefaultPipeline, the bulkhead's) until it
// returns. To wait for such calls, bounded by a context, run them under
// timelimiter.TrackCalls.
//
// A Future is safe for concurrent use: any number of goroutines may wait on it. The methods of
// a nil *Future do not panic: it reads as completed with ErrNilFuture.
type Future[T any] struct {
	done      chan struct{}
	cancel    context.CancelFunc
	completed atomic.Bool
	res       Result[T] // written once, before done is closed
}

// Go runs call guarded by p in a goroutine of its own and returns its future at once. The call
// runs with a context derived from ctx: cancelling ctx, or calling Cancel on the future, cancels
// it. A nil ctx means context.Background() and a nil p guards nothing (a panic still becomes a
// *levee.PanicError).
//
// Everything p holds applies to this one call, as it would to p.ExecuteOutcome(ctx, call): a
// TimeLimiter cancels the call's context at its deadline and completes the future with
// timelimiter.ErrTimeout; a Retry retries the call; a
// fallback answers its failure, a panic included (as a *levee.PanicError). A nil call completes
// the future at once with levee.ErrNilCall, running nothing and recording nothing: it is a
// mistake, not a failure of the dependency.
//
// The call must be ready before Go is called. To have the work of building it (opening a
// connection, encoding a request) guarded too, so that its panic or error reaches the
// fallback, use GoLazy.
func Go[T any](ctx context.Context, p *levee.Pipeline[T], call levee.Call[T]) *Future[T] {
	if call == nil {
		return failed[T](safe.ErrNilCall)
	}
	f, fctx := newFuture[T](ctx)
	go f.run(fctx, func(ctx context.Context) Result[T] {
		v, out, err := p.ExecuteOutcome(ctx, call)
		return Result[T]{Value: v, Err: err, Outcome: out}
	})
	return f
}

// GoLazy is Go for a call that is built inside the guarded execution: build runs in the
// future's goroutine, under every pattern of p, once per attempt (a Retry rebuilds it), and the
// call it returns runs right after it with the same context. An error returned by build, a nil
// call, or a panic in build is a failure of that attempt like any other: the breaker records it,
// the retry may retry it and the fallback answers it. A nil build completes the future at once with levee.ErrNilCall.
func GoLazy[T any](ctx context.Context, p *levee.Pipeline[T], build func(context.Context) (levee.Call[T], error)) *Future[T] {
	if build == nil {
		return failed[T](safe.ErrNilCall)
	}
	return Go(ctx, p, func(ctx context.Context) (T, error) {
		call, err := build(ctx)
		if err != nil {
			var zero T
			return zero, err
		}
		if call == nil {
			var zero T
			return zero, safe.ErrNilCall
		}
		return call(ctx)
	})
}

// newFuture returns a pending future and the context its call runs with.
func newFuture[T any](ctx context.Context) (*Future[T], context.Context) {
	fctx, cancel := context.WithCancel(safe.Ctx(ctx))
	return &Future[T]{done: make(chan struct{}), cancel: cancel}, fctx
}

// failed returns a future already completed with err.
func failed[T any](err error) *Future[T] {
	f := &Future[T]{done: make(chan struct{}), cancel: func() {}}
	f.complete(Result[T]{Err: err})
	return f
}

// run executes the guarded call and completes f with its result. It runs on the future's own
// goroutine, where nobody could recover a panic: so whatever escapes exec (the call's panics are
// already errors by then) still completes the future rather than crashing the program, and so
// does a call that leaves by runtime.Goexit.
func (f *Future[T]) run(ctx context.Context, exec func(context.Context) Result[T]) {
	r := Result[T]{Err: errExited}
	defer func() {
		if x := recover(); x != nil {
			r = Result[T]{Err: safe.NewPanicError(x)}
		}
		f.cancel() // the call has returned: release its context
		f.complete(r)
	}()
	r = exec(ctx)
}

// complete records r and wakes the waiters, once; later calls are ignored.
func (f *Future[T]) complete(r Result[T]) {
	if !f.completed.CompareAndSwap(false, true) {
		return
	}
	f.res = r
	close(f.done)
}

// closedChan is the Done channel of a nil future.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// Get waits for the future to complete and returns its value and error, or returns ctx's error
// as soon as ctx ends. Giving up waiting does not cancel the future: it keeps running, and a
// later Get can still read its result (use Cancel to stop it). When the future has completed,
// Get returns its result even if ctx has ended too. A nil ctx means context.Background().
func (f *Future[T]) Get(ctx context.Context) (T, error) {
	var zero T
	if f == nil {
		return zero, ErrNilFuture
	}
	select {
	case <-f.done:
		return f.res.Value, f.res.Err
	default:
	}
	ctx = safe.Ctx(ctx)
	select {
	case <-f.done:
		return f.res.Value, f.res.Err
	case <-ctx.Done():
		select { // a completion that came together with the cancellation wins
		case <-f.done:
			return f.res.Value, f.res.Err
		default:
			return zero, ctx.Err()
		}
	}
}

// Done returns a channel that is closed when the future completes, for use in a select.
func (f *Future[T]) Done() <-chan struct{} {
	if f == nil {
		return closedChan
	}
	return f.done
}

// Result returns what the future completed with and true, or the zero Result and false while
// it is still running. It never blocks.
func (f *Future[T]) Result() (Result[T], bool) {
	if f == nil {
		return Result[T]{Err: ErrNilFuture}, true
	}
	select {
	case <-f.done:
		return f.res, true
	default:
		return Result[T]{}, false
	}
}

// Outcome reports whether a fallback answered for the future (see fallback.Outcome). It is the
// zero Outcome, no fallback, while the future is running.
func (f *Future[T]) Outcome() fallback.Outcome {
	r, _ := f.Result()
	return r.Outcome
}

// Cancel cancels the future's context and returns at once. The future completes when its call
// returns; a call that honours its context returns promptly with the context's error, which
// every pattern of the pipeline treats as the caller's own cancellation: the breaker's and the
// bulkhead's permits are released, nothing is recorded as a failure, and no fallback answers
// A future that has already completed is not affected. A
// future of a WorkerPool task still in the queue completes at once with context.Canceled,
// without running.
func (f *Future[T]) Cancel() {
	if f != nil {
		f.cancel()
	}
}
