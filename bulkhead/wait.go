package bulkhead

import (
	"context"
	"time"
)

// waiter is one caller queued for a permit.
type waiter struct {
	ready      chan struct{} // closed when the permit is granted
	granted    bool          // guarded by Bulkhead.mu
	prev, next *waiter       // guarded by Bulkhead.mu
}

// waitQueue is an intrusive FIFO list, so that a waiter that gives up leaves in O(1).
type waitQueue struct {
	head, tail *waiter
}

func (q *waitQueue) push(w *waiter) {
	w.prev = q.tail
	if q.tail != nil {
		q.tail.next = w
	} else {
		q.head = w
	}
	q.tail = w
}

func (q *waitQueue) remove(w *waiter) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		q.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		q.tail = w.prev
	}
	w.prev, w.next = nil, nil
}

// wait is the slow path of Acquire: queue up and wait for a permit, MaxWaitDuration or ctx,
// whichever comes first.
func (b *Bulkhead) wait(ctx context.Context) error {
	b.mu.Lock()
	b.waiting.Add(1)
	// Permits released before this caller announced itself may still be free: serve the
	// callers queued earlier first, then this one if the queue is empty.
	b.grantLocked()
	if b.queue.head == nil && b.enter() {
		b.waiting.Add(-1)
		b.mu.Unlock()
		b.publish(EventCallPermitted)
		return nil
	}
	w := &waiter{ready: make(chan struct{})}
	b.queue.push(w)
	maxWait := time.Duration(b.maxWait.Load()) // read under mu: a ChangeConfig is before or after
	b.mu.Unlock()

	timer := time.NewTimer(maxWait)
	defer timer.Stop()
	select {
	case <-w.ready:
		// The grant and the cancellation may have raced; the caller's cancellation wins, so
		// that a caller whose context has ended never holds a permit.
		if err := ctx.Err(); err != nil {
			b.release(false)
			b.publish(EventCallRejected)
			return err
		}
		b.publish(EventCallPermitted)
		return nil
	case <-timer.C:
		if b.leave(w) {
			b.publish(EventCallPermitted)
			return nil
		}
		b.publish(EventCallRejected)
		return b.fullErr
	case <-ctx.Done():
		if b.leave(w) {
			b.release(false)
		}
		b.publish(EventCallRejected)
		return ctx.Err()
	}
}

// leave takes w out of the queue, or reports that it was granted a permit in the meantime.
func (b *Bulkhead) leave(w *waiter) (granted bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if w.granted {
		return true
	}
	b.queue.remove(w)
	b.waiting.Add(-1)
	return false
}

// grantLocked hands free permits to the queued callers in arrival order. b.mu must be held.
func (b *Bulkhead) grantLocked() {
	for w := b.queue.head; w != nil; w = b.queue.head {
		if !b.enter() {
			return
		}
		b.queue.remove(w)
		w.granted = true
		b.waiting.Add(-1)
		close(w.ready)
	}
}
