package async

import (
	"context"
	"time"
)

// worker is one worker goroutine of a WorkerPool.
type worker struct {
	handoff chan *task // a task given to this worker while it was idle
	timer   *time.Timer
}

// spawnLocked starts a worker whose first task is t.
func (p *WorkerPool) spawnLocked(t *task) {
	p.workers++
	p.takeLocked(t)
	w := &worker{handoff: make(chan *task, 1)}
	go p.work(w, t)
}

// work runs tasks until the worker is no longer needed, as ThreadPoolExecutor.runWorker.
func (p *WorkerPool) work(w *worker, t *task) {
	returned := false
	defer func() {
		if w.timer != nil {
			w.timer.Stop()
		}
		if !returned {
			p.lost(t)
		}
	}()
	for t != nil {
		p.exec(t)
		p.mu.Lock()
		p.doneLocked(t)
		p.mu.Unlock()
		t = p.next(w)
	}
	returned = true
}

// exec runs a task taken by the worker. A task whose context ended before it could start is
// completed with the context's error, without running and without events.
func (p *WorkerPool) exec(t *task) {
	if err := t.ctx.Err(); err != nil {
		t.abort(err)
		return
	}
	p.publish(EventCallPermitted)
	// Deferred so that a task leaving by runtime.Goexit is reported finished too.
	defer p.publish(EventCallFinished)
	t.run(t.ctx) // never panics: the future recovers everything
}

// doneLocked counts t as finished.
func (p *WorkerPool) doneLocked(t *task) {
	p.active--
	delete(p.running, t)
}

// lost accounts for a worker that ended with runtime.Goexit while running t, in the task or in
// an event consumer: t's future completes (with errExited if the task never ran), the worker is
// gone, and, as ThreadPoolExecutor's processWorkerExit, a new worker takes over the queue so
// that no queued task is stranded.
func (p *WorkerPool) lost(t *task) {
	p.mu.Lock()
	p.doneLocked(t)
	p.workers--
	if next := p.queue.pop(); next != nil {
		next.unwatch()
		p.spawnLocked(next)
	} else if p.closed && p.workers == 0 {
		close(p.ended)
	}
	p.mu.Unlock()
	t.abort(errExited) // a no-op when the task ran: its future is complete
}

// next returns the worker's next task, or nil when the worker must exit, as
// ThreadPoolExecutor.getTask: a task from the queue if there is one; otherwise the worker
// waits idle, for KeepAliveDuration at most when more than CoreThreadPoolSize workers are
// alive (whichever worker it is: workers are not told apart), and exits when that wait ends
// empty or the pool closes.
func (p *WorkerPool) next(w *worker) *task {
	timedOut := false
	p.mu.Lock()
	for {
		if t := p.queue.pop(); t != nil {
			p.takeLocked(t)
			p.mu.Unlock()
			t.unwatch() // the task runs now; its context no longer matters to the queue
			return t
		}
		timed := p.workers > p.core
		if p.closed || (timed && (timedOut || p.keepAlive == 0)) {
			p.workers--
			if p.closed && p.workers == 0 {
				close(p.ended)
			}
			p.mu.Unlock()
			return nil
		}
		p.idle = append(p.idle, w)
		p.mu.Unlock()

		var expired <-chan time.Time
		if timed {
			if w.timer == nil {
				w.timer = time.NewTimer(p.keepAlive)
			} else {
				w.timer.Reset(p.keepAlive)
			}
			expired = w.timer.C
		}
		select {
		case t := <-w.handoff:
			if w.timer != nil {
				w.timer.Stop()
			}
			return t // admit took it and counted it
		case <-expired:
			timedOut = true
		case <-p.closing:
		}
		p.mu.Lock()
		if !p.removeIdleLocked(w) {
			// admit chose this worker in the meantime: its task is on the way.
			p.mu.Unlock()
			return <-w.handoff
		}
	}
}

// removeIdleLocked takes w off the idle list, reporting false when it was no longer there.
func (p *WorkerPool) removeIdleLocked(w *worker) bool {
	for i, x := range p.idle {
		if x == w {
			p.idle = append(p.idle[:i], p.idle[i+1:]...)
			return true
		}
	}
	return false
}

// Shutdown stops the pool gracefully: Submit refuses new tasks with ErrPoolClosed from now on,
// the tasks already queued still run, and idle workers exit. It returns nil once every worker
// has exited, or ctx's error if ctx ends first; the pool then goes on winding down, and Close
// can hurry it. A nil ctx means context.Background(). As Resilience4j's ThreadPoolBulkhead.close,
// which shuts its executor down and awaits termination.
func (p *WorkerPool) Shutdown(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	p.mu.Lock()
	p.closeLocked()
	p.mu.Unlock()
	select {
	case <-p.ended:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the pool at once: Submit refuses new tasks with ErrPoolClosed from now on, the
// tasks still queued complete with ErrPoolClosed without running, and the contexts of the
// tasks running are cancelled. It returns once every worker goroutine has exited, so a task that
// ignores its context delays it (a TimeLimiter in the task's pipeline bounds that). Calling it
// again, or after Shutdown, is harmless. It always returns nil; the error is there for
// io.Closer. Close and Shutdown wait for every worker, so they must not be called from a task
// of p or from a subscriber running on one of p's workers: that worker would wait for itself.
func (p *WorkerPool) Close() error {
	p.mu.Lock()
	p.closeLocked()
	var dropped []*task
	for t := p.queue.pop(); t != nil; t = p.queue.pop() {
		dropped = append(dropped, t)
	}
	running := make([]*task, 0, len(p.running))
	for t := range p.running {
		running = append(running, t)
	}
	p.mu.Unlock()

	for _, t := range dropped {
		t.unwatch()
		t.abort(ErrPoolClosed)
	}
	for _, t := range running {
		t.cancel()
	}
	<-p.ended
	return nil
}

// closeLocked marks the pool closed and wakes its idle workers, once.
func (p *WorkerPool) closeLocked() {
	if p.closed {
		return
	}
	p.closed = true
	close(p.closing)
	if p.workers == 0 {
		close(p.ended)
	}
}
