package async

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/internal/compose"
	"github.com/levee-go/levee/internal/event"
	"github.com/levee-go/levee/internal/logging"
	"github.com/levee-go/levee/internal/safe"
)

// WorkerPool is a bulkhead made of worker goroutines and a bounded queue, as
// Resilience4j's ThreadPoolBulkhead: the tasks submitted to it run on its workers, so a slow
// dependency ties up at most MaxThreadPoolSize goroutines and QueueCapacity waiting tasks, and
// the submitter never blocks. It is safe for concurrent use and shared by tasks of any result
// type. Create it with NewWorkerPool and end it with Close or Shutdown; the zero value is not
// usable.
//
// Admission follows Java's ThreadPoolExecutor. A submitted task
//
//  1. starts a new worker if fewer than CoreThreadPoolSize are running (even if some are idle);
//  2. else goes to an idle worker, or waits in the queue if it has room;
//  3. else starts a new worker if fewer than MaxThreadPoolSize are running;
//  4. else is refused at once with a *WorkerPoolFullError (matching bulkhead.ErrBulkheadFull).
//
// Workers above CoreThreadPoolSize exit once they have been idle for KeepAliveDuration. The
// most recently idle worker takes the next task, so when load drops the surplus workers stay
// idle and exit, rather than sharing the work and all staying alive.
type WorkerPool struct {
	name      string
	core, max int
	queueCap  int
	keepAlive time.Duration
	logger    *slog.Logger

	mu      sync.Mutex // guards everything below; never held across a task or an event consumer
	workers int        // worker goroutines alive
	active  int        // workers running a task
	idle    []*worker  // workers waiting for a task, the most recently idle last
	queue   taskQueue
	running map[*task]struct{} // the tasks taken by workers, for Close to cancel
	closed  bool
	closing chan struct{} // closed by Close and Shutdown, to wake idle workers
	ended   chan struct{} // closed when the pool is closed and its last worker has exited

	fullErr *WorkerPoolFullError // returned for every refusal: refusing allocates nothing more
	events  event.Publisher[WorkerPoolEvent]
}

// NewWorkerPool returns a worker pool named name (the name appears in errors, events and
// metrics) configured by cfg, its zero fields replaced by the defaults. It starts no worker
// until a task is submitted. It returns an error naming the field and its allowed range when a
// field is out of range.
func NewWorkerPool(name string, cfg WorkerPoolConfig) (*WorkerPool, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	p := &WorkerPool{
		name:      name,
		logger:    cfg.Logger,
		core:      cfg.CoreThreadPoolSize,
		max:       cfg.MaxThreadPoolSize,
		queueCap:  cfg.queueCap(),
		keepAlive: cfg.keepAlive(),
		running:   make(map[*task]struct{}),
		closing:   make(chan struct{}),
		ended:     make(chan struct{}),
		fullErr:   &WorkerPoolFullError{Name: name},
	}
	logging.Subscribe(&p.events, cfg.Logger, logging.Bulkhead, name, p.logRecord)
	return p, nil
}

// Name returns the name given to NewWorkerPool.
func (p *WorkerPool) Name() string { return p.name }

// Config returns the configuration in force, defaults filled in (NoQueue and NoKeepAlive as
// given).
func (p *WorkerPool) Config() WorkerPoolConfig {
	c := WorkerPoolConfig{
		CoreThreadPoolSize: p.core,
		MaxThreadPoolSize:  p.max,
		QueueCapacity:      p.queueCap,
		KeepAliveDuration:  p.keepAlive,
		Logger:             p.logger,
	}
	if c.QueueCapacity == 0 {
		c.QueueCapacity = NoQueue
	}
	if c.KeepAliveDuration == 0 {
		c.KeepAliveDuration = NoKeepAlive
	}
	return c
}

// task is one submitted call, as the pool sees it: the pool is not generic, the future is.
type task struct {
	ctx    context.Context
	cancel context.CancelFunc
	run    func(ctx context.Context) // runs the guarded call and completes the future
	abort  func(err error)           // completes the future without running the call

	// While the task waits in the queue: its links, and the stop function of the watch
	// that takes it out of the queue if its context ends there.
	prev, next *task
	queued     bool
	unwatch    func() bool
}

// Submit runs call guarded by p on one of pool's workers and returns its future, or refuses it
// at once, as Resilience4j's ThreadPoolBulkhead.submit, when the pool is full (a
// CALL_REJECTED event) or closed. Submit never blocks waiting for room.
//
// A full pool's refusal is a failure of the call that p's fallbacks answer: the call never
// ran, so no other pattern of p sees it (no breaker records it, no retry repeats it), but each
// fallback of p, innermost first, gets the *WorkerPoolFullError (matching
// bulkhead.ErrBulkheadFull) as the call's error, on the submitter's goroutine before Submit
// returns. Submit then returns a future already completed with what they answered, as a
// future started by Go is completed when a semaphore bulkhead in p refuses its call: with the
// answer and a nil error when a fallback answered (Outcome.Fallback true, Outcome.Cause the
// *WorkerPoolFullError); otherwise with the error, the *WorkerPoolFullError or the
// *fallback.Error of a fallback that failed (which holds it), which Submit returns as well, so
// that errors.Is(err, bulkhead.ErrBulkheadFull) finds the refusal on either. After Close or
// Shutdown, Submit returns a nil future and ErrPoolClosed: the pool is gone, not busy, and no
// fallback is asked.
//
// The call runs with a context derived from ctx; cancelling ctx or calling the future's Cancel
// cancels it, and a task cancelled while it waits in the queue leaves the queue at once and
// completes with the context's error, never having run. The future completes as one started by
// Go does: with the call's value or error, or p's fallback answer. p guards the call on the
// worker, so its patterns apply to the call and not to the time spent queued; a nil p guards
// nothing. A ctx that has already ended returns its error and a nil call levee.ErrNilCall, both
// without touching the pool; a nil pool returns ErrNilWorkerPool. A nil ctx means
// context.Background().
func Submit[T any](ctx context.Context, pool *WorkerPool, p *levee.Pipeline[T], call levee.Call[T]) (*Future[T], error) {
	switch {
	case pool == nil:
		return nil, ErrNilWorkerPool
	case call == nil:
		return nil, safe.ErrNilCall
	}
	ctx = safe.Ctx(ctx)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, fctx := newFuture[T](ctx)
	t := &task{
		ctx:    fctx,
		cancel: f.cancel,
		run: func(ctx context.Context) {
			f.run(ctx, func(ctx context.Context) Result[T] {
				v, out, err := p.ExecuteOutcome(ctx, call)
				return Result[T]{Value: v, Err: err, Outcome: out}
			})
		},
		abort: func(err error) {
			f.cancel()
			f.complete(Result[T]{Err: err})
		},
	}
	if err := pool.admit(t); err != nil {
		f.cancel()
		if err != pool.fullErr {
			return nil, err
		}
		// The pool refused the call: p's fallback answers, as for a semaphore bulkhead's
		// refusal inside p, and the future is completed with its answer.
		v, out, err := compose.Recover(ctx, (*compose.Chain[T])(p), err)
		f.complete(Result[T]{Value: v, Err: err, Outcome: out})
		return f, err
	}
	return f, nil
}

// admit places t according to the admission rules, or refuses it.
func (p *WorkerPool) admit(t *task) error {
	p.mu.Lock()
	switch {
	case p.closed:
		p.mu.Unlock()
		return ErrPoolClosed
	case p.workers < p.core:
		p.spawnLocked(t)
	case len(p.idle) > 0:
		w := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		p.takeLocked(t)
		w.handoff <- t // buffered: an idle worker's slot is empty
	case p.queue.len < p.queueCap:
		p.queue.push(t)
		// A task whose context ends while it waits leaves the queue at once. The watch is
		// set under the lock so that a worker taking t can always stop it.
		t.unwatch = context.AfterFunc(t.ctx, func() { p.dropQueued(t) })
	case p.workers < p.max:
		p.spawnLocked(t)
	default:
		p.mu.Unlock()
		p.publish(EventCallRejected)
		return p.fullErr
	}
	p.mu.Unlock()
	return nil
}

// takeLocked counts t as taken by a worker.
func (p *WorkerPool) takeLocked(t *task) {
	p.active++
	p.running[t] = struct{}{}
}

// dropQueued takes t out of the queue because its context ended there, and completes it.
func (p *WorkerPool) dropQueued(t *task) {
	p.mu.Lock()
	if !t.queued { // a worker took it, or Close dropped it
		p.mu.Unlock()
		return
	}
	p.queue.remove(t)
	p.mu.Unlock()
	t.abort(t.ctx.Err())
}

// taskQueue is a FIFO of tasks linked through the tasks themselves, so that a task cancelled
// while it waits leaves it in constant time, and queuing allocates nothing.
type taskQueue struct {
	head, tail *task
	len        int
}

func (q *taskQueue) push(t *task) {
	t.prev, t.next, t.queued = q.tail, nil, true
	if q.tail == nil {
		q.head = t
	} else {
		q.tail.next = t
	}
	q.tail = t
	q.len++
}

func (q *taskQueue) pop() *task {
	t := q.head
	if t != nil {
		q.remove(t)
	}
	return t
}

func (q *taskQueue) remove(t *task) {
	if t.prev == nil {
		q.head = t.next
	} else {
		t.prev.next = t.next
	}
	if t.next == nil {
		q.tail = t.prev
	} else {
		t.next.prev = t.prev
	}
	t.prev, t.next, t.queued = nil, nil, false
	q.len--
}
