package stream

import (
	"context"

	"github.com/levee-go/levee"
)

// Map calls fn(ctx, v) through the pipeline p for each element v of in, and sends one Result
// per element on the returned channel, in input order unless Unordered or OrderByKey is given.
// The channel is closed when in is closed and every result has been sent, when ctx is done, or
// after the last Result under StopOnError.
//
// Each call is one guarded call of p, as p.Execute would make it (a nil p guards nothing): an
// element's retries, breaker decision, bulkhead permit and fallback are its own, so one bad
// element is one failed Result, not a dead stream. Calls get a context derived from ctx and
// cancelled when the stream stops, so that calls still running release their permits without
// being recorded as failures; such cancelled calls yield no Result. WithFallback adds an
// element-aware fallback outermost.
//
// Guarantees: at most Concurrency calls run at once, in at most Concurrency + 2 goroutines;
// elements are read from in only as results are sent, so a slow consumer slows the calls
// (nothing buffers more than the Window, Concurrency by default, plus the output's Buffer,
// DefaultBuffer by default); once the output is closed, every goroutine Map started is about
// to return and every call has returned. A panic in fn becomes the element's
// *levee.PanicError.
//
// Map returns an error, and starts nothing, when an option is invalid or does not apply,
// when fn is nil (levee.ErrNilCall) or when in is nil (ErrNilInput). A nil ctx means
// context.Background().
//
// With a Concurrency of 1 and a pipeline without TimeLimiter, Map allocates nothing per
// element on the success path when no pattern has event subscribers.
func Map[V, R any](ctx context.Context, in <-chan V, p *levee.Pipeline[R], fn func(context.Context, V) (R, error),
	opts ...Option) (<-chan Result[V, R], error) {
	if in == nil {
		return nil, ErrNilInput
	}
	s, err := newStage("Map", in, p, fn, expandOne[V, R], opts)
	if err != nil {
		return nil, err
	}
	return s.start(ctx), nil
}

func expandOne[V, R any](r Result[V, R], yield func(Result[V, R]) bool) bool { return yield(r) }

// Filter calls keep(ctx, v) through the pipeline p for each element v of in and sends the
// elements it keeps, as Results whose Value is the element itself. An element keep turns down
// yields no Result; an element whose call failed yields one carrying the error (and no Value),
// so a failing predicate never drops an element silently. A fallback (the pipeline's or
// WithFallback) answers with the decision to keep or drop. Options, guarantees and errors are
// Map's.
func Filter[V any](ctx context.Context, in <-chan V, p *levee.Pipeline[bool], keep func(context.Context, V) (bool, error),
	opts ...Option) (<-chan Result[V, V], error) {
	if in == nil {
		return nil, ErrNilInput
	}
	s, err := newStage("Filter", in, p, keep, expandFilter[V], opts)
	if err != nil {
		return nil, err
	}
	return s.start(ctx), nil
}

func expandFilter[V any](r Result[V, bool], yield func(Result[V, V]) bool) bool {
	if r.Err == nil && !r.Value {
		return true
	}
	o := Result[V, V]{Index: r.Index, In: r.In, Err: r.Err, Fallback: r.Fallback, Cause: r.Cause}
	if r.Err == nil {
		o.Value = r.In
	}
	return yield(o)
}

// FlatMap calls fn(ctx, v) through the pipeline p for each element v of in; the call returns
// a slice, and FlatMap sends one Result per value of it, in the slice's order, all with the
// element's Index and In. A failed call yields one Result carrying the error; an empty slice
// yields none. The guarded call is the one that produces the slice, so p and WithFallback
// deal in []R. Options, guarantees and errors are Map's; with Concurrency n, the results of
// up to n elements are held.
func FlatMap[V, R any](ctx context.Context, in <-chan V, p *levee.Pipeline[[]R], fn func(context.Context, V) ([]R, error),
	opts ...Option) (<-chan Result[V, R], error) {
	if in == nil {
		return nil, ErrNilInput
	}
	s, err := newStage("FlatMap", in, p, fn, expandSlice[V, R], opts)
	if err != nil {
		return nil, err
	}
	return s.start(ctx), nil
}

func expandSlice[V, R any](r Result[V, []R], yield func(Result[V, R]) bool) bool {
	if r.Err != nil {
		return yield(Result[V, R]{Index: r.Index, In: r.In, Err: r.Err, Fallback: r.Fallback, Cause: r.Cause})
	}
	for _, x := range r.Value {
		if !yield(Result[V, R]{Index: r.Index, In: r.In, Value: x, Fallback: r.Fallback, Cause: r.Cause}) {
			return false
		}
	}
	return true
}
