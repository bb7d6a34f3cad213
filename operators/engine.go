package operators

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/internal/chans"
	"github.com/levee-go/levee/internal/compose"
	"github.com/levee-go/levee/internal/engine"
	"github.com/levee-go/levee/internal/safe"
	"github.com/reactivex/rxgo/v2"
)

// emission is the engine behind the per-emission operators: for each value item of the
// upstream it makes one guarded call returning a C and expands the call's Result[V, C] into
// the items it emits (one for Map, zero or one for Filter, several for FlatMap). Error items
// of the upstream take their place in the order and are forwarded unchanged; nothing is
// called for them.
//
// The ordering, the concurrency and the bounds are engine.Stage's, shared with the stream
// package: with a concurrency of 1 the subscription's own goroutine (rxgo.Defer's) does
// everything; with n > 1 there are n + 1 more, a dispatcher and n workers, while the
// subscription's goroutine emits the results.
type emission[V, C any] struct {
	op     string
	p      *compose.Chain[C] // the *levee.Pipeline[C]'s chain
	fn     func(context.Context, V) (C, error)
	fb     func(context.Context, V, error) (C, error)
	expand func(r Result[V, C], send func(rxgo.Item) bool) bool
	set    settings
	stop   bool // end at the first error item
	// newLanes makes the lanes of OrderByKey, one set per subscription; nil without it.
	newLanes func() engine.LaneSet[V]
	// watched tells whether a subscription has taken the CommitWatermark: only the first may.
	watched atomic.Bool
}

// newEmission builds the operator op. Every operator goes on past an error item unless given
// StopOnError, as stream's operators go on past a failed element; stops tells whether op
// emits a failed element as an error item (Map, Filter, FlatMap) rather than a value.
func newEmission[V, C any](op string, stops bool, p *levee.Pipeline[C], fn func(context.Context, V) (C, error),
	expand func(Result[V, C], func(rxgo.Item) bool) bool, opts []Option) (*emission[V, C], error) {
	set, err := collect(op, perEmission, opts)
	if err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, levee.ErrNilCall
	}
	fb, err := engine.Fallback[V, C](op, &set.em)
	if err != nil {
		return nil, fmt.Errorf("operators: %w", err)
	}
	newLanes, err := engine.Keys[V](op, &set.em)
	if err != nil {
		return nil, fmt.Errorf("operators: %w", err)
	}
	if w := set.em.Watermark; w != nil {
		if err := w.Bind(); err != nil {
			return nil, fmt.Errorf("operators: %w", err)
		}
	}
	if err := set.em.CheckMaxUncommitted(); err != nil {
		return nil, fmt.Errorf("operators: %w", err)
	}
	stop := set.em.StopOnError
	return &emission[V, C]{op: op, p: (*compose.Chain[C])(p), fn: fn, fb: fb, expand: expand, set: set, stop: stop,
		newLanes: newLanes}, nil
}

func (e *emission[V, C]) operator() Operator {
	opts := e.set.rxOptions()
	return func(up rxgo.Observable) rxgo.Observable {
		seen := new(observed)
		return deferredCalls(func(ctx context.Context, next chan<- rxgo.Item) {
			e.run(ctx, up, seen, next)
		}, opts...)
	}
}

// numbered is an upstream item with its index among the upstream's value items.
type numbered struct {
	index int
	item  rxgo.Item
}

// step is one upstream item on its way out: an element's Result, or an upstream error.
type step[V, C any] struct {
	r     Result[V, C]
	upErr error
}

// subscription is one Observe of a per-emission operator.
type subscription[V, C any] struct {
	e      *emission[V, C]
	ctx    context.Context // cancelled when the subscription stops, whatever the reason
	cancel context.CancelFunc
	done   <-chan struct{}
	// consumer is the done channel of the consumer's context, watched by every send as well:
	// a context of the caller's own type reaches ctx only through a goroutine of package
	// context's, a moment after it is done.
	consumer <-chan struct{}
	send     func(rxgo.Item) bool // s.emit
	u        *upstream
	index    int               // of the next value item
	ended    bool              // an error item that ends the subscription has been read: read no further
	pause    *engine.Pause     // PauseWhileOpen's, one per subscription; nil without it
	wm       *engine.Watermark // CommitWatermark's, first subscription only; nil without it
	sending  int               // the index of the element whose items deliver is emitting
	next     chan<- rxgo.Item
}

func (e *emission[V, C]) run(ctx context.Context, up rxgo.Observable, seen *observed, next chan<- rxgo.Item) {
	s := &subscription[V, C]{e: e, next: next, consumer: ctx.Done()}
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.done = s.ctx.Done()
	s.send = s.emit
	if w := e.set.em.Watermark; w != nil {
		if !e.watched.CompareAndSwap(false, true) {
			s.cancel()
			chans.Send(next, rxgo.Error(fmt.Errorf("operators: %s observed again: %w", e.op, engine.ErrWatermarkInUse)), ctx.Done())
			return
		}
		s.wm, s.send = w, s.emitCounted
	}
	if e.set.em.Pause && e.p.CanRefuse() {
		s.pause = engine.NewPause(e.set.em.MaxPause, e.p.Watch, e.p.RetryAfter)
	}
	u, err := open(s.ctx, up, seen)
	if err != nil {
		s.cancel()
		chans.Send(next, rxgo.Error(err), ctx.Done())
		return
	}
	s.u = u
	// Once Run returns, the upstream and every call still running are cancelled and the
	// goroutines it started have returned; rxgo.Defer then closes the output, so by then
	// every call has returned and released its permits.
	st := engine.Stage[numbered, step[V, C]]{
		Concurrency: e.set.em.Concurrency,
		Window:      e.set.em.Window,
		Ordered:     e.set.em.Ordered(),
		Receive:     s.receive,
		Call:        s.call,
		Deliver:     s.deliver,
		Fail:        s.fail,
	}
	if e.newLanes != nil && e.set.em.Concurrency > 1 {
		st.Lanes = itemLanes[V]{e.newLanes()}
	}
	st.Run(s.done, s.cancel)
}

// itemLanes gives the value items of type V the lanes of their keys under OrderByKey. An
// upstream error item, or a value that is not a V, has no key: it is passed on, or fails, as
// soon as its turn comes, ordered with nothing.
type itemLanes[V any] struct{ engine.LaneSet[V] }

func (l itemLanes[V]) Enter(n numbered) (*engine.Lane, error) {
	if n.item.E != nil {
		return nil, nil
	}
	v, err := as[V](n.item.V, n.index)
	if err != nil {
		return nil, nil
	}
	return l.LaneSet.Enter(v)
}

// fail is the step of the value item n, which fails with err without a call: its OrderByKey
// key function panicked.
func (s *subscription[V, C]) fail(_ int, n numbered, err error) step[V, C] {
	v, _ := as[V](n.item.V, n.index)
	return step[V, C]{r: Result[V, C]{Index: n.index, In: v, Err: err}}
}

// receive takes the next upstream item and numbers it. Once it has taken an error item that
// ends the subscription, the input has ended: nothing past it is read, so nothing past it is
// called, however many workers are free.
func (s *subscription[V, C]) receive(done <-chan struct{}) (numbered, bool) {
	if s.ended {
		return numbered{}, false
	}
	if n := s.e.set.em.MaxUncommitted; n > 0 && s.wm != nil && !s.wm.WaitBelow(s.index, n, done) {
		return numbered{}, false
	}
	it, ok := s.u.receive(done)
	n := numbered{index: s.index, item: it}
	switch {
	case !ok:
	case it.E == nil:
		s.index++
	case s.e.stop:
		s.ended = true
	}
	return n, ok
}

// call makes the guarded call for a value item, or passes an upstream error on.
func (s *subscription[V, C]) call(_ int, n numbered) step[V, C] {
	if n.item.E != nil {
		return step[V, C]{upErr: n.item.E}
	}
	return step[V, C]{r: s.element(n.index, n.item.V)}
}

// element makes the guarded call for the value item x, the index-th element.
func (s *subscription[V, C]) element(index int, x any) Result[V, C] {
	v, err := as[V](x, index)
	if err != nil {
		return Result[V, C]{Index: index, Err: err}
	}
	e := s.e
	val, o, err, paused := engine.Guard(s.ctx, s.done, s.pause, e.p, e.fn, v)
	r := Result[V, C]{Index: index, In: v, Value: val, Err: err, Fallback: o.Fallback, Cause: o.Cause, Paused: paused}
	if err != nil && e.fb != nil && !safe.CallerCancelled(s.ctx, err) {
		if fv, ferr := engine.ElementFallback(s.ctx, "operators", e.fb, v, err); ferr != nil {
			r.Err = ferr
		} else {
			r.Value, r.Err, r.Fallback, r.Cause = fv, nil, true, err
		}
	}
	return r
}

// deliver emits what st expands to and reports whether the subscription goes on. A call
// ended by the subscription's own cancellation is not a result: nobody waits for it.
func (s *subscription[V, C]) deliver(st step[V, C]) bool {
	stop := s.e.stop
	if st.upErr != nil {
		if s.wm != nil {
			s.wm.SendingOther()
		}
		return s.emit(rxgo.Error(st.upErr)) && !stop
	}
	r := st.r
	s.sending = r.Index
	if r.Err != nil {
		if safe.CallerCancelled(s.ctx, r.Err) {
			return false
		}
		if stop {
			r.Err = &StoppedError[V]{Index: r.Index, In: r.In, Err: r.Err}
			s.complete(r.Index, s.e.expand(r, s.send))
			return false
		}
	}
	return s.complete(r.Index, s.e.expand(r, s.send))
}

// complete records, with CommitWatermark, that every item of element i has been emitted when
// sent says so, and returns sent.
func (s *subscription[V, C]) complete(i int, sent bool) bool {
	if sent && s.wm != nil {
		s.wm.Complete(i)
	}
	return sent
}

// emitCounted is emit with CommitWatermark: the item, of the element deliver is emitting, is
// counted before it is sent, so that the consumer cannot acknowledge it first.
func (s *subscription[V, C]) emitCounted(it rxgo.Item) bool {
	s.wm.Sending(s.sending)
	return s.emit(it)
}

// emit sends it on the subscription's output, unless the subscription or its consumer is done.
func (s *subscription[V, C]) emit(it rxgo.Item) bool {
	return chans.SendOr(s.next, it, s.done, s.consumer)
}
