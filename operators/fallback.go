package operators

import (
	"context"

	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/internal/safe"
	"github.com/reactivex/rxgo/v2"
)

// Fallback returns an Operator that replaces a failed subscription with the Observable f's
// handlers answer, as Reactor's onErrorResume behind Resilience4j's fallback decorator:
//
//   - the upstream's items are forwarded until its first error item; the upstream is then
//     cancelled and f.Recover chooses the handler for that error (closest match along its
//     chain, as for any call; f's metrics and events count it);
//   - a handler's Observable is subscribed to, once, and its items follow those the failed
//     upstream had emitted; a nil Observable ends the subscription cleanly. A handler that
//     hands out again the same single-use Observable (rxgo's Create, FromChannel, ...) after
//     an earlier subscription took items from it is refused: the error item is then a
//     *fallback.Error holding ErrSingleUse and the original error. An error item of
//     the replacement ends the subscription with a *fallback.Error holding it and the
//     original error (the replacement is never subscribed to again: rxgo's
//     OnErrorResumeNext loops for ever on a failing fallback), unless its chain already holds
//     the original error, which then ends it as it is;
//   - with no handler for the error, or when the handler fails, the error item is the one
//     f.Recover returns: the original error itself, or a *fallback.Error holding both;
//   - nothing is answered when the consumer cancelled.
//
// Handlers receive the subscription's context. f's OnResult handlers do not apply to
// streams. Only errors reach f: give it a stream whose build errors are error items (Lazy,
// Retry) so that a failure to build the stream is answered too. A nil f fails every
// subscription with fallback.ErrNilFallback.
func Fallback(f *fallback.Fallback[rxgo.Observable]) Operator {
	return func(up rxgo.Observable) rxgo.Observable {
		answers := new(observed) // a handler handing out the same single-use Observable again
		return guarded(up, func(ctx context.Context, open func() (*upstream, error), next chan<- rxgo.Item) {
			if f == nil {
				fail(ctx, next, fallback.ErrNilFallback)
				return
			}
			u, err := open()
			if err != nil {
				fail(ctx, next, err)
				return
			}
			defer u.stop()
			r := relay(ctx, u, next, nil)
			u.close()
			if r.end != failed || ctx.Err() != nil { // nobody is left to answer
				return
			}
			replace(ctx, f, r.err, answers, next)
		})
	}
}

// replace answers cause with f and relays the answer.
func replace(ctx context.Context, f *fallback.Fallback[rxgo.Observable], cause error, answers *observed, next chan<- rxgo.Item) {
	obs, answered, err := f.Recover(ctx, cause)
	if !answered {
		if !safe.CallerCancelled(ctx, err) {
			fail(ctx, next, err)
		}
		return
	}
	if obs == nil {
		return
	}
	u, err := open(ctx, obs, answers)
	if err != nil { // ErrSingleUse: the answer cannot be replayed
		fail(ctx, next, &fallback.Error{Name: f.Name(), Cause: cause, Err: err})
		return
	}
	defer u.stop()
	r := relay(ctx, u, next, nil)
	if r.end != failed {
		return
	}
	u.close()
	if safe.Is(r.err, cause) { // r.err comes from user code: an Is method that panics must not crash
		fail(ctx, next, r.err)
		return
	}
	fail(ctx, next, &fallback.Error{Name: f.Name(), Cause: cause, Err: r.err})
}
