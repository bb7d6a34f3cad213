package operators

import (
	"context"

	"github.com/levee-go/levee"
	"github.com/reactivex/rxgo/v2"
)

// Map returns an Operator that calls fn(ctx, v) through the pipeline p for each value item v
// of its upstream and emits the call's value, in input order unless Unordered or OrderByKey
// is given. It is stream.Map over an Observable, with rxgo's Item in place of Result: use
// MapResults to see the element, its index and whether a fallback answered.
//
// Each call is one guarded call of p, as p.Execute would make it (a nil p guards nothing):
// an element's retries, breaker decision, bulkhead permit and fallback are its own. An
// element that fails once every fallback has had its say is an error item carrying its
// error, in its place among the values, and Map goes on, as stream.Map goes on past a failed
// Result. With StopOnError it ends the subscription instead, with an error item whose error
// is a *StoppedError naming the element and wrapping its error, as an error ends an
// Observable for rxgo's own operators, and makes no call past it: give it before rxgo's
// ToSlice, Reduce and the like, or levee's Collect, which stop reading there. A fallback
// (WithFallback or the pipeline's) answers a failed element; MapResults makes it a value. A
// panic in fn is the element's *levee.PanicError, never a crash. Error items of the upstream
// are forwarded unchanged in their place and are not calls: no pattern sees them; with
// StopOnError they too end the subscription. An item whose value is not a V is a
// failed element with an *ItemTypeError.
//
// Each Observe is a subscription of its own: it observes the upstream under a context derived
// from the one given to Observe (rxgo.WithContext), which it cancels when it stops (the
// upstream completed, an error item ended it, or the consumer's context ended), so the upstream's
// goroutines end too, even those of rxgo operators that leak when they are left to stop on
// their own. Calls get that context as well: calls still running when the consumer cancels
// release their permits without being recorded as failures and emit nothing: once that
// context is done, nothing more is emitted, even to a consumer still reading. The output is
// closed once every call has returned, calls a TimeLimiter of p gave up on included: their
// timeout is emitted at the deadline, and the completion waits until they have returned and
// released their bulkhead permits, so a call that ignores its context delays it that long.
//
// Guarantees: at most Concurrency calls run at once, in at most Concurrency + 2 goroutines
// per subscription; items are read from the upstream only as results are emitted, so a slow
// consumer slows the calls (nothing buffers more than the Window, Concurrency by default, plus
// the Buffer, DefaultBuffer by default).
//
// Map returns an error, and builds nothing, when an option is invalid or does not apply, or
// when fn is nil (levee.ErrNilCall). Applied to a nil Observable, the Operator's
// subscriptions fail with ErrNilObservable.
func Map[V, R any](p *levee.Pipeline[R], fn func(context.Context, V) (R, error), opts ...Option) (Operator, error) {
	e, err := newEmission("Map", true, p, fn, emitValue[V, R], opts)
	if err != nil {
		return nil, err
	}
	return e.operator(), nil
}

func emitValue[V, R any](r Result[V, R], send func(rxgo.Item) bool) bool {
	if r.Err != nil {
		return send(rxgo.Error(r.Err))
	}
	return send(rxgo.Of(r.Value))
}

// MapResults is Map that emits, for each element, an item whose value is the
// Result[V, R] of its call: the element (In) and its Index among the upstream's value items,
// the value or the error, and whether a fallback (the pipeline's or WithFallback) answered.
// A failed element is therefore a value item too, and the subscription goes on after it
// (StopOnError ends it there instead); the upstream's error items are forwarded as error
// items, in their place. Options, guarantees and errors are Map's.
func MapResults[V, R any](p *levee.Pipeline[R], fn func(context.Context, V) (R, error), opts ...Option) (Operator, error) {
	e, err := newEmission("MapResults", false, p, fn, emitResult[V, R], opts)
	if err != nil {
		return nil, err
	}
	return e.operator(), nil
}

func emitResult[V, R any](r Result[V, R], send func(rxgo.Item) bool) bool {
	return send(rxgo.Of(r))
}

// Filter returns an Operator that calls keep(ctx, v) through the pipeline p for each value
// item v and emits v when keep reports true, nothing when it reports false, and an error item
// when the call failed, so a failing predicate never drops an element silently; as with Map,
// the subscription goes on past that error item unless StopOnError is given. A fallback
// (the pipeline's or WithFallback) answers with the decision to keep or drop. Options,
// guarantees and errors are Map's.
func Filter[V any](p *levee.Pipeline[bool], keep func(context.Context, V) (bool, error), opts ...Option) (Operator, error) {
	e, err := newEmission("Filter", true, p, keep, emitKept[V], opts)
	if err != nil {
		return nil, err
	}
	return e.operator(), nil
}

func emitKept[V any](r Result[V, bool], send func(rxgo.Item) bool) bool {
	switch {
	case r.Err != nil:
		return send(rxgo.Error(r.Err))
	case r.Value:
		return send(rxgo.Of(r.In))
	default:
		return true
	}
}

// FlatMap returns an Operator that calls fn(ctx, v) through the pipeline p for each value
// item v; the call returns a slice, and FlatMap emits its values in order (none for an empty
// slice), or one error item when the call failed, past which it goes on as Map does unless
// StopOnError is given. The guarded call is the one that produces
// the slice, so p and WithFallback deal in []R. Options, guarantees and errors are Map's; with
// Concurrency n, the slices of up to n elements are held. Unlike rxgo's FlatMap, it reads the
// context given to Observe, can be observed any number of times and keeps the order.
func FlatMap[V, R any](p *levee.Pipeline[[]R], fn func(context.Context, V) ([]R, error), opts ...Option) (Operator, error) {
	e, err := newEmission("FlatMap", true, p, fn, emitEach[V, R], opts)
	if err != nil {
		return nil, err
	}
	return e.operator(), nil
}

func emitEach[V, R any](r Result[V, []R], send func(rxgo.Item) bool) bool {
	if r.Err != nil {
		return send(rxgo.Error(r.Err))
	}
	for _, x := range r.Value {
		if !send(rxgo.Of(x)) {
			return false
		}
	}
	return true
}
