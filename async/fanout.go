package async

import (
	"context"
	"sync"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/internal/compose"
	"github.com/levee-go/levee/internal/safe"
)

// All runs every call guarded by p, concurrently, and returns their results in input order,
// once every call it started has returned: by then every permit they took is back. The calls
// share p's patterns, so one breaker, bulkhead and rate limiter see the whole fan-out. A fan-out
// wider than p's bulkhead gets the surplus refused at once (MaxWaitDuration 0, the bulkhead's
// default): pace it with MaxConcurrency(n) for n at most the bulkhead's limit, or give the
// bulkhead a MaxWaitDuration.
//
// err is nil when every call succeeded or was answered by p's fallback. Otherwise it is the
// first failure: with FailFast, the error that stopped the fan-out; without, the error of the
// failed call with the lowest index. Every result, failed ones included, is in the slice either
// way. A nil call fails with levee.ErrNilCall without running p.
//
// Cancelling ctx cancels every call; those not yet started (MaxConcurrency) are not started and
// report an error matching ErrNotStarted and ctx's error. A nil ctx means
// context.Background(); an invalid option makes All return (nil, error) without running
// anything.
func All[T any](ctx context.Context, p *levee.Pipeline[T], calls []levee.Call[T], opts ...Option) ([]Result[T], error) {
	return fanOut(ctx, len(calls), opts, func(ctx context.Context, i int) Result[T] {
		call := calls[i]
		if call == nil {
			return Result[T]{Err: safe.ErrNilCall}
		}
		v, out, err := p.ExecuteOutcome(ctx, call)
		return Result[T]{Value: v, Err: err, Outcome: out}
	})
}

// Map is All for one function over many inputs: it runs fn(ctx, in) guarded by p for every in
// of inputs, without a closure per input, and returns the results in input
// order. Everything All says applies. A nil fn returns (nil, levee.ErrNilCall).
func Map[A, T any](ctx context.Context, p *levee.Pipeline[T], fn func(context.Context, A) (T, error), inputs []A, opts ...Option) ([]Result[T], error) {
	if fn == nil {
		return nil, safe.ErrNilCall
	}
	c := (*compose.Chain[T])(p)
	return fanOut(ctx, len(inputs), opts, func(ctx context.Context, i int) Result[T] {
		v, out, err := compose.ApplyOutcome(ctx, c, fn, inputs[i])
		return Result[T]{Value: v, Err: err, Outcome: out}
	})
}

// fanOut runs exec(ctx, i) for i in [0, n) on goroutines of their own, at most o.limit(n) at a
// time, and waits for all of them.
func fanOut[T any](ctx context.Context, n int, opts []Option, exec func(context.Context, int) Result[T]) ([]Result[T], error) {
	o, err := collect(opts)
	if err != nil {
		return nil, err
	}
	gctx, cancel := context.WithCancelCause(safe.Ctx(ctx))
	defer cancel(nil)

	results := make([]Result[T], n)
	var (
		wg       sync.WaitGroup
		stopOnce sync.Once
		stopErr  error // the failure that stopped a FailFast fan-out
	)
	// A slot is taken before a call's goroutine starts and given back when it ends, so
	// waiting calls cost nothing. The slot is given back after the call's failure has
	// cancelled gctx, so the loop below, which takes that slot next, sees the cancellation
	// and starts nothing more: FailFast is exact, not racy.
	slots := make(chan struct{}, o.limit(n))
	i := 0
	for ; i < n; i++ {
		select {
		case slots <- struct{}{}:
		case <-gctx.Done():
		}
		if gctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func(i int) {
			r := Result[T]{Err: errExited}
			defer func() {
				if x := recover(); x != nil {
					r = Result[T]{Err: safe.NewPanicError(x)}
				}
				results[i] = r
				if r.Err != nil && o.failFast {
					stopOnce.Do(func() { stopErr = r.Err; cancel(&failFastStop{r.Err}) })
				}
				<-slots
				wg.Done()
			}()
			r = exec(o.ctxFor(gctx, i), i)
		}(i)
	}
	if i < n {
		cause := &notStartedError{cause: gctx.Err()}
		if stop, ok := context.Cause(gctx).(*failFastStop); ok {
			cause.stoppedBy = stop.err
		}
		for ; i < n; i++ {
			results[i] = Result[T]{Err: cause}
		}
	}
	wg.Wait()

	if stopErr != nil {
		return results, stopErr
	}
	for _, r := range results {
		if r.Err != nil {
			return results, r.Err
		}
	}
	return results, nil
}
