package async

import (
	"context"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/internal/safe"
)

// FirstSuccess runs the calls guarded by p, concurrently, and returns the first live success:
// the value of the first call to return without error and without its fallback answering (to
// query replicas, say). It then cancels the calls still running, which releases their permits
// without recording them against the dependency, and returns once they have returned. The
// Outcome is that of the answer returned.
//
// A call answered by p's fallback has failed: its answer is kept, and returned only when no
// call succeeds live (the answer of the lowest-indexed call, then). When every call fails and
// none was answered, the error is the failure of the only call, or all the failures joined in
// input order (errors.Join). With FailFast the first call to complete decides, whatever its
// outcome. With MaxConcurrency(n) the calls start in input order, n at a time, each failure
// making room for the next.
//
// Cancelling ctx cancels every call; FirstSuccess then returns ctx's error once they have
// returned. No calls returns ErrNoCalls; a nil call fails with levee.ErrNilCall without running
// p; a nil ctx means context.Background(); an invalid option returns its error without running
// anything.
func FirstSuccess[T any](ctx context.Context, p *levee.Pipeline[T], calls []levee.Call[T], opts ...Option) (T, fallback.Outcome, error) {
	var zero T
	o, err := collect(opts)
	if err != nil {
		return zero, fallback.Outcome{}, err
	}
	n := len(calls)
	if n == 0 {
		return zero, fallback.Outcome{}, ErrNoCalls
	}
	r := newRace(ctx, n, func(ctx context.Context, i int) Result[T] {
		call := calls[i]
		if call == nil {
			return Result[T]{Err: safe.ErrNilCall}
		}
		v, out, err := p.ExecuteOutcome(o.ctxFor(ctx, i), call)
		return Result[T]{Value: v, Err: err, Outcome: out}
	})
	for r.started < o.limit(n) {
		r.start(r.started)
	}
	for r.running > 0 {
		a, ok := r.receive()
		switch {
		case !ok:
			return r.abandoned()
		case live(a) || o.failFast:
			return r.won(a)
		case r.ctx.Err() != nil:
			return r.abandoned() // a failure caused by the caller's cancellation
		}
		r.note(a)
		if r.started < n {
			r.start(r.started)
		}
	}
	return r.lost()
}
