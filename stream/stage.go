package stream

import (
	"context"
	"sync"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/internal/chans"
	"github.com/levee-go/levee/internal/pipeline"
	"github.com/levee-go/levee/internal/safe"
	"github.com/levee-go/levee/internal/tracker"
)

// stage is the engine behind the per-emission operators: it reads elements V from in, makes
// one guarded call per element returning a C, and expands each call's Result[V, C] into the
// Results[V, O] it sends (one for Map, zero or one for Filter, several for FlatMap).
//
// With a concurrency of 1 one goroutine does everything. With n > 1 there are n + 2: a
// dispatcher that numbers the elements and hands them out, n workers that make the calls, and
// an emitter that sends the results (in input order unless unordered) and closes the output.
// A token channel of capacity n bounds the elements taken from the input but not yet sent to
// n, which bounds the reorder window, the results held, and what a slow consumer lets through.
type stage[V, C, O any] struct {
	ctx    context.Context // cancelled when the operator stops, whatever the reason
	cancel context.CancelFunc
	done   <-chan struct{}

	in  <-chan V
	out chan Result[V, O]

	p      *pipeline.Chain[C] // the *levee.Pipeline[C]'s, looked up once
	fn     func(context.Context, V) (C, error)
	fb     func(context.Context, V, error) (C, error)
	expand func(r Result[V, C], yield func(Result[V, O]) bool) bool
	yield  func(Result[V, O]) bool

	concurrency int
	ordered     bool
	stopOnError bool

	// feed, when set, runs in a goroutine of its own before the stage starts and writes in
	// (Batch's batcher). It must return once ctx is done.
	feed func()
	wg   sync.WaitGroup // every goroutine but the one that closes out
	// calls counts the goroutines a TimeLimiter runs calls on, under ctx: the output is
	// closed only once those it gave up on have returned too.
	calls tracker.Tracker
}

func newStage[V, C, O any](op string, in <-chan V, p *levee.Pipeline[C], fn func(context.Context, V) (C, error),
	expand func(Result[V, C], func(Result[V, O]) bool) bool, opts []Option) (*stage[V, C, O], error) {
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
	return &stage[V, C, O]{
		in:          in,
		out:         make(chan Result[V, O], set.buffer),
		p:           pipeline.Of[C](p),
		fn:          fn,
		fb:          fb,
		expand:      expand,
		concurrency: set.concurrency,
		ordered:     !set.unordered,
		stopOnError: set.stopOnError,
	}, nil
}

// start runs the stage under a context derived from ctx and returns its output.
func (s *stage[V, C, O]) start(ctx context.Context) <-chan Result[V, O] {
	s.ctx, s.cancel = context.WithCancel(tracker.With(safe.Ctx(ctx), &s.calls))
	s.done = s.ctx.Done()
	s.yield = s.send
	if s.feed != nil {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.feed()
		}()
	}
	if s.concurrency == 1 {
		go s.serial()
	} else {
		go s.concurrent()
	}
	return s.out
}

// finish stops everything the stage started, waits for it, then closes the output: once the
// output is closed, every call the stage made has returned and released its permits, those a
// TimeLimiter gave up on included.
func (s *stage[V, C, O]) finish() {
	s.cancel()
	s.wg.Wait()
	s.calls.Wait(nil)
	close(s.out)
}

func (s *stage[V, C, O]) send(r Result[V, O]) bool { return chans.Send(s.out, r, s.done) }

// call makes the guarded call for element i and applies the element fallback.
func (s *stage[V, C, O]) call(i int, v V) Result[V, C] {
	val, o, err := pipeline.ApplyOutcome(s.ctx, s.p, s.fn, v)
	r := Result[V, C]{Index: i, In: v, Value: val, Err: err, Fallback: o.Fallback, Cause: o.Cause}
	if err != nil && s.fb != nil && !safe.CallerCancelled(s.ctx, err) {
		s.fallback(&r)
	}
	return r
}

func (s *stage[V, C, O]) fallback(r *Result[V, C]) {
	fb, in, cause := s.fb, r.In, r.Err
	v, err := safe.Call(s.ctx, func(ctx context.Context) (C, error) { return fb(ctx, in, cause) })
	if err != nil {
		r.Err = &fallback.Error{Name: "stream", Cause: cause, Err: err}
		return
	}
	r.Value, r.Err, r.Fallback, r.Cause = v, nil, true, cause
}

// deliver sends what r expands to and reports whether the stage goes on. A call ended by the
// stage's own cancellation is not a result: nobody waits for it.
func (s *stage[V, C, O]) deliver(r Result[V, C]) bool {
	if r.Err != nil {
		if safe.CallerCancelled(s.ctx, r.Err) {
			return false
		}
		if s.stopOnError {
			r.Err = &StoppedError[V]{Index: r.Index, In: r.In, Err: r.Err}
			s.expand(r, s.yield)
			return false
		}
	}
	return s.expand(r, s.yield)
}

func (s *stage[V, C, O]) serial() {
	defer s.finish()
	for i := 0; ; i++ {
		v, ok := chans.Receive(s.in, s.done)
		if !ok || chans.Closed(s.done) {
			return
		}
		if !s.deliver(s.call(i, v)) {
			return
		}
	}
}

type job[V any] struct {
	i int
	v V
}

func (s *stage[V, C, O]) concurrent() {
	defer s.finish()
	n := s.concurrency
	tokens := make(chan struct{}, n)
	jobs := make(chan job[V])
	total := make(chan int, 1) // the number of elements, once the input is closed
	// Ordered results go to slot i%n: the tokens guarantee that the result of element i-n
	// has been taken from it before element i is handed out, so a slot never holds two and
	// a worker never blocks on it. Unordered ones share one channel of the same capacity.
	var slots []chan Result[V, C]
	var results chan Result[V, C]
	if s.ordered {
		slots = make([]chan Result[V, C], n)
		for i := range slots {
			slots[i] = make(chan Result[V, C], 1)
		}
	} else {
		results = make(chan Result[V, C], n)
	}

	s.wg.Add(1 + n)
	go s.dispatch(tokens, jobs, total)
	for range n {
		go s.work(jobs, slots, results)
	}

	totalc, count := total, -1
	for next := 0; count < 0 || next < count; {
		from := results
		if s.ordered {
			from = slots[next%n]
		}
		var r Result[V, C]
		select {
		case r = <-from:
		case count = <-totalc:
			totalc = nil
			continue
		case <-s.done:
			return
		}
		next++
		if !s.deliver(r) {
			return
		}
		<-tokens
	}
}

func (s *stage[V, C, O]) dispatch(tokens chan<- struct{}, jobs chan<- job[V], total chan<- int) {
	defer s.wg.Done()
	for i := 0; ; i++ {
		select {
		case tokens <- struct{}{}:
		case <-s.done:
			return
		}
		v, ok := chans.Receive(s.in, s.done)
		if !ok {
			total <- i
			return
		}
		if chans.Closed(s.done) {
			return
		}
		select {
		case jobs <- job[V]{i, v}:
		case <-s.done:
			return
		}
	}
}

func (s *stage[V, C, O]) work(jobs <-chan job[V], slots []chan Result[V, C], results chan<- Result[V, C]) {
	defer s.wg.Done()
	for {
		var j job[V]
		select {
		case j = <-jobs:
		case <-s.done:
			return
		}
		if chans.Closed(s.done) { // both were ready: a stopped stage makes no more calls
			return
		}
		r := s.call(j.i, j.v)
		if slots != nil {
			slots[j.i%len(slots)] <- r
		} else {
			results <- r
		}
	}
}
