package operators

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/internal/chans"
	"github.com/levee-go/levee/internal/safe"
	"github.com/levee-go/levee/internal/tracker"
	"github.com/reactivex/rxgo/v2"
)

// Operator turns an Observable into another, as rxgo's methods do, so that operators of this
// package and the caller's own functions chain the same way:
//
//	priced := guard(orders) // guard, err := operators.Map(pricing, price)
//
// Every Operator of this package returns an Observable built on rxgo.Defer: nothing happens
// until it is observed, and each Observe is a fresh subscription that observes the upstream
// again under a context of its own, cancelled whenever the operator stops.
type Operator = func(rxgo.Observable) rxgo.Observable

// Source builds an Observable. It is called once per subscription (per attempt under Retry),
// inside the guarded execution, with a context that is cancelled when that subscription or
// attempt ends, however it ends: an error returned, or a panic raised, while building is a
// failure of the stream that the patterns record and Retry and Fallback see, and rxgo
// factories that read their context at construction (Create, Interval, FlatMap, Retry, ...)
// given rxgo.WithContext(ctx) stop with the subscription instead of leaking.
//
//	src := func(ctx context.Context) (rxgo.Observable, error) {
//		ch, err := feed.Open(ctx) // fails here: the fallback answers
//		if err != nil {
//			return nil, err
//		}
//		return rxgo.FromChannel(ch, rxgo.WithContext(ctx)), nil
//	}
type Source func(ctx context.Context) (rxgo.Observable, error)

// ErrNilObservable is the error item of a subscription whose upstream is nil: an Operator
// applied to nil, or a Source that returned (nil, nil).
var ErrNilObservable = errors.New("operators: nil observable")

// ErrSingleUse is the error item of a subscription that observes, again, an Observable that
// rxgo lets be observed only once, after an earlier subscription took items from it. rxgo's
// Create, Start, FromChannel, its Retry and BackOffRetry, and anything built with eager
// observation hand the same channel to every observer; observed again, they yield nothing
// and complete, so a resubscription (a retry, a second subscriber) would pass for a clean,
// empty stream. Build such Observables in a Source instead: it is called once per
// subscription.
//
// Only reuse of the very same channel can be seen. A lazy rxgo operator over a single-use
// Observable (Create(...).Map(f)) makes a new channel on each Observe that reads the drained
// one, and cannot be told from an empty stream; hot Observables (Interval, FromEventSource)
// give late observers only later items. Neither is detected.
var ErrSingleUse = errors.New("operators: observable observed again after it emitted; " +
	"it can be observed only once (rxgo Create, Start, FromChannel, Retry, eager observation): build it in a Source")

// Lazy returns an Observable that calls src at each subscription, with the subscription's
// context, and emits the items of the Observable src returns, unchanged, until it completes.
// An error returned by src, or a panic in it (as a *levee.PanicError), becomes the single
// error item of the subscription; a nil Observable is ErrNilObservable and a nil src
// levee.ErrNilCall. Lazy is the innermost layer of a guarded subscription: a CircuitBreaker or
// Bulkhead above it asks permission before src is even called.
//
// The context given to src is cancelled when the subscription ends (the upstream completed,
// or the consumer cancelled), so an Observable built with rxgo.WithContext(ctx) stops with it.
// Lazy's output is closed only once the Observable src returned has closed its channel, that
// is once the goroutine behind it has returned, discarding the items it emits after the
// cancellation: an Observable that never closes its channel keeps the subscription (and the
// permits of the operators above) until it does.
func Lazy(src Source) rxgo.Observable {
	seen := new(observed)
	return deferred(func(ctx context.Context, next chan<- rxgo.Item) {
		if src == nil {
			fail(ctx, next, levee.ErrNilCall)
			return
		}
		bctx, cancel := context.WithCancel(ctx)
		defer cancel()
		obs, err := safe.Call(bctx, src)
		if err != nil {
			fail(ctx, next, err)
			return
		}
		u, err := open(bctx, obs, seen)
		if err != nil {
			fail(ctx, next, err)
			return
		}
		// The Observable src built has stopped when Lazy's own output closes, so that a
		// Bulkhead above holds its permit until then.
		defer u.stop()
		done := ctx.Done()
		for {
			it, ok := u.receive(done)
			if !ok || !chans.Send(next, it, done) {
				return
			}
		}
	})
}

// deferred wraps a producer in rxgo.Defer, the only rxgo factory that is lazy, runs its
// producer again in a new goroutine at each Observe, reads the context given to Observe, and
// closes its output when the producer returns.
func deferred(p rxgo.Producer, opts ...rxgo.Option) rxgo.Observable {
	return rxgo.Defer([]rxgo.Producer{p}, opts...)
}

// deferredCalls is deferred for an operator that makes guarded calls: it gives the producer a
// context carrying a tracker of the goroutines a TimeLimiter runs calls on, and closes the
// output only once the producer has returned and those goroutines have ended, the ones whose
// caller gave up included, so that every call has returned when the consumer sees the end.
func deferredCalls(p rxgo.Producer, opts ...rxgo.Option) rxgo.Observable {
	return deferred(func(ctx context.Context, next chan<- rxgo.Item) {
		var calls tracker.Tracker
		p(tracker.With(ctx, &calls), next)
		calls.Wait(nil)
	}, opts...)
}

// observed remembers the channel an Observable gave its last observer, so that an
// Observable handing out the same channel again after it emitted is refused (ErrSingleUse).
// It keeps at most that one channel reachable.
type observed struct {
	mu   sync.Mutex
	ch   <-chan rxgo.Item
	used *atomic.Bool // an item was taken from ch
}

func (o *observed) check(ch <-chan rxgo.Item) (*atomic.Bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ch == ch && o.used != nil {
		if o.used.Load() {
			return nil, ErrSingleUse
		}
		return o.used, nil
	}
	o.ch, o.used = ch, new(atomic.Bool)
	return o.used, nil
}

// upstream is one subscription to an Observable under a context of its own, cancelled by
// close: whatever the reason an operator stops reading, the goroutines behind ch are told.
type upstream struct {
	ch     <-chan rxgo.Item
	cancel context.CancelFunc
	used   *atomic.Bool
	marked bool
}

// open observes obs under a child of ctx. seen, when not nil, refuses a single-use
// Observable observed again. A panic in obs's Observe (a nil *rxgo.ObservableImpl, a broken
// implementation) is a *levee.PanicError.
func open(ctx context.Context, obs rxgo.Observable, seen *observed) (*upstream, error) {
	if obs == nil {
		return nil, ErrNilObservable
	}
	cctx, cancel := context.WithCancel(ctx)
	ch, err := observeSafely(cctx, obs)
	if err != nil {
		cancel()
		return nil, err
	}
	u := &upstream{ch: ch, cancel: cancel}
	if seen != nil {
		used, err := seen.check(ch)
		if err != nil {
			cancel()
			return nil, err
		}
		u.used = used
	}
	return u, nil
}

// observeSafely calls obs.Observe under ctx, turning a panic into a *levee.PanicError.
func observeSafely(ctx context.Context, obs rxgo.Observable) (ch <-chan rxgo.Item, err error) {
	defer func() {
		if r := recover(); r != nil {
			ch, err = nil, safe.NewPanicError(r)
		}
	}()
	return obs.Observe(rxgo.WithContext(ctx)), nil
}

// receive takes the next item. ok is false when the upstream completed or done is closed;
// rxgo sources do not all close their channel on cancellation, so done is watched too.
func (u *upstream) receive(done <-chan struct{}) (it rxgo.Item, ok bool) {
	it, ok = chans.Receive(u.ch, done)
	if ok {
		u.took()
	}
	return it, ok
}

// tryReceive takes an item the upstream has already sent, without waiting.
func (u *upstream) tryReceive() (it rxgo.Item, ok bool) {
	select {
	case it, ok = <-u.ch:
		if ok {
			u.took()
		}
	default:
	}
	return it, ok
}

// took notes that an item was taken from the channel, for ErrSingleUse.
func (u *upstream) took() {
	if !u.marked {
		u.marked = true
		if u.used != nil {
			u.used.Store(true)
		}
	}
}

func (u *upstream) close() { u.cancel() }

// stop cancels the upstream and waits until it has stopped, that is until it closes its
// channel, discarding what it still emits: rxgo closes an Observable's channel once the
// goroutine behind it has returned. An upstream that never closes its channel keeps stop
// waiting.
func (u *upstream) stop() {
	u.cancel()
	for range u.ch {
	}
}
