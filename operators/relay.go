package operators

import (
	"context"

	"github.com/reactivex/rxgo/v2"

	"github.com/levee-go/levee/internal/chans"
	"github.com/levee-go/levee/internal/safe"
)

// ending is how a guarded subscription's upstream ended, from the point of view of the
// patterns around it.
type ending uint8

const (
	completed ending = iota // the upstream completed
	failed                  // the upstream emitted an error item (err), or could not start
	cancelled               // the consumer's context ended
)

// relayed is the outcome of relay.
type relayed struct {
	end   ending
	err   error // the error item, when failed
	items int   // value items taken from the upstream
}

// relay forwards the value items of u to next until u completes, emits its first error item,
// or ctx ends. The error item is not forwarded: the pattern records the outcome first, then
// emits it, so that a consumer that has seen the end finds the outcome recorded. onValue, when
// not nil, sees each value before it is forwarded.
//
// rxgo closes an Observable's channel on cancellation as on completion, and a source may
// report its cancellation as an error item: once ctx is done, an end of the upstream or an
// item that is that cancellation is the cancellation. An error item the upstream sent before
// the consumer cancelled is still its failure, however soon after it the consumer left, as
// for TimeLimiter.
func relay(ctx context.Context, u *upstream, next chan<- rxgo.Item, onValue func(any)) relayed {
	done := ctx.Done()
	var r relayed
	for {
		it, ok := u.receive(done)
		if !ok && ctx.Err() != nil {
			it, ok = u.tryReceive() // the consumer left; an item already sent still counts
		}
		switch {
		case ok && it.E != nil && !safe.CallerCancelled(ctx, it.E):
			r.end, r.err = failed, it.E
			return r
		case !ok || ctx.Err() != nil:
			if ctx.Err() != nil {
				r.end = cancelled
			}
			return r
		}
		r.items++
		if onValue != nil {
			onValue(it.V)
		}
		if !chans.Send(next, it, done) {
			r.end = cancelled
			return r
		}
	}
}

// guarded is the shape of a per-subscription pattern: guard runs once per Observe, with the
// subscription's context, takes its permission, opens the upstream with open (not before: a
// refused subscription never observes, and so never builds, its upstream), relays it to next
// and gives its permission back.
func guarded(up rxgo.Observable, guard func(ctx context.Context, open func() (*upstream, error), next chan<- rxgo.Item)) rxgo.Observable {
	seen := new(observed)
	return deferred(func(ctx context.Context, next chan<- rxgo.Item) {
		guard(ctx, func() (*upstream, error) { return open(ctx, up, seen) }, next)
	})
}

// fail emits err as the subscription's last item.
func fail(ctx context.Context, next chan<- rxgo.Item, err error) {
	chans.Send(next, rxgo.Error(err), ctx.Done())
}
