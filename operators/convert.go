package operators

import (
	"context"
	"errors"
	"sync"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/internal/chans"
	"github.com/levee-go/levee/internal/safe"
	"github.com/levee-go/levee/stream"
	"github.com/reactivex/rxgo/v2"
)

// FromSource returns an Observable whose every subscription runs the stream package's lazy
// Source: src is called with the subscription's context and each element it emits becomes a
// value item; an error src returns, or a panic it raises (a *levee.PanicError), becomes the
// last item, an error item. emit blocks until the consumer has taken the element and returns
// an error once the consumer's context has ended, when src must return; emit is safe for
// concurrent use and refuses elements once src has returned. src's context is cancelled when
// src returns. The Observable can be observed any number of times, each Observe calling src
// again, so Retry and the per-subscription operators can restart it. A nil src fails every
// subscription with levee.ErrNilCall.
func FromSource[T any](src stream.Source[T]) rxgo.Observable {
	return deferred(func(ctx context.Context, next chan<- rxgo.Item) {
		if src == nil {
			fail(ctx, next, levee.ErrNilCall)
			return
		}
		p := &pushed[T]{next: next, consumer: ctx}
		p.ctx, p.cancel = context.WithCancel(ctx)
		err := p.run(src)
		if err != nil && ctx.Err() == nil {
			fail(ctx, next, err)
		}
	})
}

// pushed is one subscription of FromSource.
type pushed[T any] struct {
	ctx    context.Context
	cancel context.CancelFunc
	// consumer is the context given to Observe, watched by emit as well: one of a type of the
	// caller's own reaches ctx only through a goroutine of package context's, a moment after
	// it is done.
	consumer context.Context
	next     chan<- rxgo.Item
	// mu serialises emit with itself and with the end of run, so that nothing is sent once
	// run has returned and rxgo.Defer closes the output, even by a Source that emits from
	// another goroutine or too late. run cancels ctx first to end an emit waiting for the
	// consumer.
	mu   sync.Mutex
	over bool
}

func (p *pushed[T]) run(src stream.Source[T]) (err error) {
	defer func() {
		p.cancel()
		p.mu.Lock()
		p.over = true
		p.mu.Unlock()
	}()
	defer func() {
		if v := recover(); v != nil {
			err = safe.NewPanicError(v)
		}
	}()
	return src(p.ctx, p.emit)
}

// errEmitAfterReturn is what emit returns once the Source has returned.
var errEmitAfterReturn = errors.New("operators: emit called after the source returned")

func (p *pushed[T]) emit(v T) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.over {
		return errEmitAfterReturn
	}
	if !chans.SendOr(p.next, rxgo.Of(v), p.ctx.Done(), p.consumer.Done()) {
		if err := p.consumer.Err(); err != nil {
			return err
		}
		return p.ctx.Err()
	}
	return nil
}

// FromChan returns an Observable whose every subscription calls open with the
// subscription's context and emits the values of the channel it returns, completing when the
// channel is closed: stream.FromChan through FromSource. open should make whatever feeds the
// channel stop when its context is done, which happens when the consumer cancels. An error
// from open, or a panic in it, is the subscription's error item; a nil channel is
// stream.ErrNilChannel.
//
// Given a function, not a channel, the Observable can be observed again, each subscription
// opening its own stream; rxgo.FromChannel hands the same channel to every observer.
func FromChan[T any](open func(ctx context.Context) (<-chan T, error)) rxgo.Observable {
	return FromSource(stream.FromChan(open))
}

// FromResults returns an Observable of the results of a per-emission stream operator: open
// is called at each subscription (typically calling stream.Map with its context) and each
// Result becomes a value item carrying its Value, or an error item carrying its Err when the
// element failed; the subscription goes on after such an item, as the stream did. To keep the
// whole Results (element, index, fallback marks), use FromChan[stream.Result[V, R]] instead.
// Errors of open are FromChan's.
func FromResults[V, R any](open func(ctx context.Context) (<-chan stream.Result[V, R], error)) rxgo.Observable {
	return fromItems(open, func(r stream.Result[V, R]) rxgo.Item {
		if r.Err != nil {
			return rxgo.Error(r.Err)
		}
		return rxgo.Of(r.Value)
	})
}

// FromItems returns an Observable of the output of stream.Subscribe: open is called at each
// subscription (typically calling stream.Subscribe with its context) and each Item becomes a
// value item carrying its Value, or, for the last Item of a failed stream, an error item
// carrying its Err. Errors of open are FromChan's.
func FromItems[T any](open func(ctx context.Context) (<-chan stream.Item[T], error)) rxgo.Observable {
	return fromItems(open, func(it stream.Item[T]) rxgo.Item {
		if it.Err != nil {
			return rxgo.Error(it.Err)
		}
		return rxgo.Of(it.Value)
	})
}

func fromItems[E any](open func(ctx context.Context) (<-chan E, error), item func(E) rxgo.Item) rxgo.Observable {
	if open == nil {
		return FromSource[E](nil)
	}
	return deferred(func(consumer context.Context, next chan<- rxgo.Item) {
		ctx, cancel := context.WithCancel(consumer)
		defer cancel()
		ch, err := safe.Call(ctx, open)
		if err == nil && ch == nil {
			err = stream.ErrNilChannel
		}
		if err != nil {
			fail(ctx, next, err)
			return
		}
		// The consumer's done channel too: one of a context of the caller's own type reaches
		// ctx only through a goroutine of package context's, a moment after it is done.
		done, left := ctx.Done(), consumer.Done()
		for {
			e, ok := chans.Receive(ch, done)
			if !ok || !chans.SendOr(next, item(e), done, left) {
				return
			}
		}
	})
}

// ToSource adapts src to the stream package's lazy Source: each call builds an Observable
// with src and the call's context, observes it, and emits its values (which must be of type
// T), so that stream.Subscribe can guard an rxgo stream. The Source returns nil when the
// Observable completes, the error of its first error item (the subscription is cancelled
// there), an *ItemTypeError for a value of another type, the error emit returned, or the
// error src returned. Calling the Source again builds a new Observable, so stream's Retry
// restarts the rxgo stream from its beginning; a src that hands out the same single-use
// Observable again fails with ErrSingleUse. A nil src gives a Source that returns
// levee.ErrNilCall at each call, emitting nothing: stream.Subscribe then starts, and its
// attempts fail with that error, as the patterns see any other error of the source.
func ToSource[T any](src Source) stream.Source[T] {
	if src == nil {
		return func(context.Context, func(T) error) error { return levee.ErrNilCall }
	}
	seen := new(observed)
	return func(ctx context.Context, emit func(T) error) error {
		obs, err := safe.Call(ctx, src)
		if err != nil {
			return err
		}
		return drain(ctx, obs, seen, emit)
	}
}

// ToChan observes obs under ctx and sends its values, which must be of type T, on values.
// errc then receives exactly one value, available once values is closed: nil when obs
// completed, the error of its first error item (obs is cancelled there: in Rx an error ends
// a stream), an *ItemTypeError for a value of another type, or ctx.Err() when ctx ended
// first (which rxgo itself would report as completion). The goroutine ToChan starts ends with
// the subscription; as with any channel, a consumer that stops reading values must cancel
// ctx. A nil ctx means context.Background().
func ToChan[T any](ctx context.Context, obs rxgo.Observable) (values <-chan T, errc <-chan error) {
	ctx = safe.Ctx(ctx)
	out := make(chan T)
	ec := make(chan error, 1)
	go func() {
		defer close(out)
		done := ctx.Done()
		ec <- drain(ctx, obs, nil, func(v T) error {
			if !chans.Send(out, v, done) {
				return ctx.Err()
			}
			return nil
		})
	}()
	return out, ec
}
