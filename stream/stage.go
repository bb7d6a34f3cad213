package stream

import (
	"context"
	"fmt"
	"sync"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/internal/chans"
	"github.com/levee-go/levee/internal/compose"
	"github.com/levee-go/levee/internal/engine"
	"github.com/levee-go/levee/internal/safe"
	"github.com/levee-go/levee/internal/tracker"
)

// stage is the engine behind the per-emission operators: it reads elements V from in, makes
// one guarded call per element returning a C, and expands each call's Result[V, C] into the
// Results[V, O] it sends (one for Map, zero or one for Filter, several for FlatMap). The
// ordering, the concurrency and the bounds are engine.Stage's, shared with the operators
// module; with n > 1 workers the stage runs in n + 2 goroutines.
type stage[V, C, O any] struct {
	ctx    context.Context // cancelled when the operator stops, whatever the reason
	cancel context.CancelFunc
	done   <-chan struct{}
	// consumer is the done channel of the consumer's context, watched by every send as well:
	// a context of the caller's own type reaches ctx only through a goroutine of package
	// context's, a moment after it is done.
	consumer <-chan struct{}

	in  <-chan V
	out chan Result[V, O]

	p      *compose.Chain[C] // the *levee.Pipeline[C]'s chain
	fn     func(context.Context, V) (C, error)
	fb     func(context.Context, V, error) (C, error)
	expand func(r Result[V, C], yield func(Result[V, O]) bool) bool
	yield  func(Result[V, O]) bool

	engine      engine.Stage[V, Result[V, C]]
	stopOnError bool
	pause       *engine.Pause     // PauseWhileOpen, nil without it
	wm          *engine.Watermark // CommitWatermark, nil without it
	uncommitted int               // MaxUncommitted, 0 without it
	taken       int               // elements received, for MaxUncommitted

	// feed, when set, runs in a goroutine of its own before the stage starts and writes in
	// (Batch's batcher). It must return once ctx is done.
	feed func()
	wg   sync.WaitGroup // the feed
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
	fb, err := engine.Fallback[V, C](op, &set.em)
	if err != nil {
		return nil, fmt.Errorf("stream: %w", err)
	}
	newLanes, err := engine.Keys[V](op, &set.em)
	if err != nil {
		return nil, fmt.Errorf("stream: %w", err)
	}
	s := &stage[V, C, O]{
		in:          in,
		out:         make(chan Result[V, O], set.em.Buffer),
		p:           (*compose.Chain[C])(p),
		fn:          fn,
		fb:          fb,
		expand:      expand,
		stopOnError: set.em.StopOnError,
	}
	if w := set.em.Watermark; w != nil {
		if err := w.Bind(); err != nil {
			return nil, fmt.Errorf("stream: %w", err)
		}
		s.wm = w
	}
	if err := set.em.CheckMaxUncommitted(); err != nil {
		return nil, fmt.Errorf("stream: %w", err)
	}
	s.uncommitted = set.em.MaxUncommitted
	if set.em.Pause && s.p.CanRefuse() {
		s.pause = engine.NewPause(set.em.MaxPause, s.p.Watch, s.p.RetryAfter)
	}
	s.engine = engine.Stage[V, Result[V, C]]{
		Concurrency: set.em.Concurrency,
		Window:      set.em.Window,
		Ordered:     set.em.Ordered(),
		Receive:     s.receive,
		Call:        s.call,
		Deliver:     s.deliver,
		Fail:        s.fail,
	}
	if newLanes != nil && set.em.Concurrency > 1 {
		s.engine.Lanes = newLanes()
	}
	return s, nil
}

// start runs the stage under a context derived from ctx and returns its output.
func (s *stage[V, C, O]) start(ctx context.Context) <-chan Result[V, O] {
	ctx = safe.Ctx(ctx)
	s.consumer = ctx.Done()
	s.ctx, s.cancel = context.WithCancel(tracker.With(ctx, &s.calls))
	s.done = s.ctx.Done()
	s.yield = s.send
	if s.wm != nil {
		s.yield = s.sendCounted
	}
	if s.feed != nil {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.feed()
		}()
	}
	go s.run()
	return s.out
}

// run runs the engine, then waits for the feed and for the calls a TimeLimiter gave up on, and
// closes the output: once the output is closed, every call the stage made has returned and
// released its permits, those a TimeLimiter gave up on included.
func (s *stage[V, C, O]) run() {
	s.engine.Run(s.done, s.cancel)
	s.wg.Wait()
	s.calls.Wait(nil)
	close(s.out)
}

func (s *stage[V, C, O]) receive(done <-chan struct{}) (V, bool) {
	if s.uncommitted > 0 {
		if !s.wm.WaitBelow(s.taken, s.uncommitted, done) {
			var zero V
			return zero, false
		}
		s.taken++
	}
	return chans.Receive(s.in, done)
}

func (s *stage[V, C, O]) send(r Result[V, O]) bool { return chans.SendOr(s.out, r, s.done, s.consumer) }

// sendCounted is send with CommitWatermark: r is counted before it is sent, so that the
// consumer cannot acknowledge it first.
func (s *stage[V, C, O]) sendCounted(r Result[V, O]) bool {
	s.wm.Sending(r.Index)
	return s.send(r)
}

// call makes the guarded call for element i and applies the element fallback.
func (s *stage[V, C, O]) call(i int, v V) Result[V, C] {
	val, o, err, paused := engine.Guard(s.ctx, s.done, s.pause, s.p, s.fn, v)
	r := Result[V, C]{Index: i, In: v, Value: val, Err: err, Fallback: o.Fallback, Cause: o.Cause, Paused: paused}
	if err != nil && s.fb != nil && !safe.CallerCancelled(s.ctx, err) {
		if fv, ferr := engine.ElementFallback(s.ctx, "stream", s.fb, v, err); ferr != nil {
			r.Err = ferr
		} else {
			r.Value, r.Err, r.Fallback, r.Cause = fv, nil, true, err
		}
	}
	return r
}

// fail is the Result of element i, which fails with err without a call: its OrderByKey key
// function panicked.
func (s *stage[V, C, O]) fail(i int, v V, err error) Result[V, C] {
	return Result[V, C]{Index: i, In: v, Err: err}
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
			s.complete(r.Index, s.expand(r, s.yield))
			return false
		}
	}
	return s.complete(r.Index, s.expand(r, s.yield))
}

// complete records, with CommitWatermark, that every Result of element i has been sent when
// sent says so, and returns sent.
func (s *stage[V, C, O]) complete(i int, sent bool) bool {
	if sent && s.wm != nil {
		s.wm.Complete(i)
	}
	return sent
}
