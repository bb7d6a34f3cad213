package operators

import (
	"context"
	"sync"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/internal/chans"
	"github.com/levee-go/levee/internal/pipeline"
	"github.com/levee-go/levee/internal/safe"
	"github.com/reactivex/rxgo/v2"
)

// emission is the engine behind the per-emission operators: for each value item of the
// upstream it makes one guarded call returning a C and expands the call's Result[V, C] into
// the items it emits (one for Map, zero or one for Filter, several for FlatMap). Error items
// of the upstream take their place in the order and are forwarded unchanged; nothing is
// called for them.
//
// It is the stream package's stage over rxgo items: with a concurrency of 1 the
// subscription's own goroutine (rxgo.Defer's) does everything; with n > 1 there are n + 1
// more, a dispatcher that numbers the items and hands them out and n workers that make the
// calls, while the subscription's goroutine emits the results (in input order unless
// unordered). A token channel of capacity n bounds the items taken from the upstream but not
// yet emitted to n.
type emission[V, C any] struct {
	op     string
	p      *pipeline.Chain[C] // the *levee.Pipeline[C]'s, looked up once
	fn     func(context.Context, V) (C, error)
	fb     func(context.Context, V, error) (C, error)
	expand func(r *Result[V, C], next chan<- rxgo.Item, done <-chan struct{}) bool
	set    settings
}

func newEmission[V, C any](op string, p *levee.Pipeline[C], fn func(context.Context, V) (C, error),
	expand func(*Result[V, C], chan<- rxgo.Item, <-chan struct{}) bool, opts []Option) (*emission[V, C], error) {
	set, err := collect(op, perEmission, opts)
	if err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, levee.ErrNilCall
	}
	fb, err := elementFallback[V, C](op, &set)
	if err != nil {
		return nil, err
	}
	return &emission[V, C]{op: op, p: pipeline.Of[C](p), fn: fn, fb: fb, expand: expand, set: set}, nil
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

// step is one upstream item on its way out: an element's Result, or an upstream error.
type step[V, C any] struct {
	seq   int // position among all the upstream's items, for the reorder window
	r     Result[V, C]
	upErr error
}

// subscription is one Observe of a per-emission operator.
type subscription[V, C any] struct {
	e      *emission[V, C]
	ctx    context.Context // cancelled when the subscription stops, whatever the reason
	cancel context.CancelFunc
	done   <-chan struct{}
	u      *upstream
	next   chan<- rxgo.Item
	wg     sync.WaitGroup // the dispatcher and the workers
}

func (e *emission[V, C]) run(ctx context.Context, up rxgo.Observable, seen *observed, next chan<- rxgo.Item) {
	s := &subscription[V, C]{e: e, next: next}
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.done = s.ctx.Done()
	defer s.finish()
	u, err := open(s.ctx, up, seen)
	if err != nil {
		chans.Send(next, rxgo.Error(err), s.done)
		return
	}
	s.u = u
	if e.set.concurrency == 1 {
		s.serial()
	} else {
		s.concurrent()
	}
}

// finish cancels the upstream and every call still running and waits for the goroutines the
// subscription started; rxgo.Defer closes the output once it returns, so by then every call
// has returned and released its permits.
func (s *subscription[V, C]) finish() {
	s.cancel()
	s.wg.Wait()
}

// element makes the guarded call for the value item x, the index-th element.
func (s *subscription[V, C]) element(index int, x any) Result[V, C] {
	v, err := as[V](x, index)
	if err != nil {
		return Result[V, C]{Index: index, Err: err}
	}
	e := s.e
	val, o, err := pipeline.ApplyOutcome(s.ctx, e.p, e.fn, v)
	r := Result[V, C]{Index: index, In: v, Value: val, Err: err, Fallback: o.Fallback, Cause: o.Cause}
	if err != nil && e.fb != nil && !safe.CallerCancelled(s.ctx, err) {
		s.fallback(&r)
	}
	return r
}

func (s *subscription[V, C]) fallback(r *Result[V, C]) {
	fb, in, cause := s.e.fb, r.In, r.Err
	v, err := safe.Call(s.ctx, func(ctx context.Context) (C, error) { return fb(ctx, in, cause) })
	if err != nil {
		r.Err = &fallback.Error{Name: "operators", Cause: cause, Err: err}
		return
	}
	r.Value, r.Err, r.Fallback, r.Cause = v, nil, true, cause
}

// deliver emits what st expands to and reports whether the subscription goes on. A call
// ended by the subscription's own cancellation is not a result: nobody waits for it.
func (s *subscription[V, C]) deliver(st *step[V, C]) bool {
	if st.upErr != nil {
		return chans.Send(s.next, rxgo.Error(st.upErr), s.done) && !s.e.set.stopOnError
	}
	r := &st.r
	if r.Err != nil {
		if safe.CallerCancelled(s.ctx, r.Err) {
			return false
		}
		if s.e.set.stopOnError {
			r.Err = &StoppedError[V]{Index: r.Index, In: r.In, Err: r.Err}
			s.e.expand(r, s.next, s.done)
			return false
		}
	}
	return s.e.expand(r, s.next, s.done)
}

func (s *subscription[V, C]) serial() {
	var st step[V, C]
	for index := 0; ; {
		it, ok := s.u.receive(s.done)
		if !ok || chans.Closed(s.done) {
			return
		}
		if it.E != nil {
			st = step[V, C]{upErr: it.E}
		} else {
			st = step[V, C]{r: s.element(index, it.V)}
			index++
		}
		if !s.deliver(&st) {
			return
		}
	}
}

type job struct {
	seq, index int
	item       rxgo.Item
}

func (s *subscription[V, C]) concurrent() {
	n := s.e.set.concurrency
	tokens := make(chan struct{}, n)
	jobs := make(chan job)
	total := make(chan int, 1) // the number of upstream items, once it completed
	// Ordered steps go to slot seq%n: the tokens guarantee that the step of item seq-n has
	// been taken from it before item seq is handed out, so a slot never holds two and a
	// worker never blocks on it. Unordered ones share one channel of the same capacity.
	var slots []chan step[V, C]
	var results chan step[V, C]
	if s.e.set.unordered {
		results = make(chan step[V, C], n)
	} else {
		slots = make([]chan step[V, C], n)
		for i := range slots {
			slots[i] = make(chan step[V, C], 1)
		}
	}

	s.wg.Add(1 + n)
	go s.dispatch(tokens, jobs, total)
	for range n {
		go s.work(jobs, slots, results)
	}

	totalc, count := total, -1
	for next := 0; count < 0 || next < count; {
		from := results
		if slots != nil {
			from = slots[next%n]
		}
		var st step[V, C]
		select {
		case st = <-from:
		case count = <-totalc:
			totalc = nil
			continue
		case <-s.done:
			return
		}
		next++
		if !s.deliver(&st) {
			return
		}
		<-tokens
	}
}

func (s *subscription[V, C]) dispatch(tokens chan<- struct{}, jobs chan<- job, total chan<- int) {
	defer s.wg.Done()
	index := 0
	for seq := 0; ; seq++ {
		select {
		case tokens <- struct{}{}:
		case <-s.done:
			return
		}
		it, ok := s.u.receive(s.done)
		if !ok {
			total <- seq
			return
		}
		j := job{seq: seq, index: index, item: it}
		if it.E == nil {
			index++
		}
		select {
		case jobs <- j:
		case <-s.done:
			return
		}
	}
}

func (s *subscription[V, C]) work(jobs <-chan job, slots []chan step[V, C], results chan<- step[V, C]) {
	defer s.wg.Done()
	for {
		var j job
		select {
		case j = <-jobs:
		case <-s.done:
			return
		}
		st := step[V, C]{seq: j.seq}
		if j.item.E != nil {
			st.upErr = j.item.E
		} else {
			st.r = s.element(j.index, j.item.V)
		}
		if slots != nil {
			slots[j.seq%len(slots)] <- st
		} else {
			results <- st
		}
	}
}
