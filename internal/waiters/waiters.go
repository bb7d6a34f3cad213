// Package waiters is the FIFO queue of callers waiting for a grant (a bulkhead's permit, an
// adaptive limiter's slot): an intrusive doubly linked list, so that a caller that gives up
// leaves in O(1), and the wait itself, which settles the races between a grant, the end of the
// wait and the caller's context in one place.
//
// A Queue is guarded by its owner's mutex: Push, Grant, Len and Empty are called with it held,
// Await takes it only to leave the queue. Only a caller that has to wait touches a Queue, so it
// costs nothing on the path of a caller served at once.
package waiters

import (
	"context"
	"sync"
	"time"
)

// Waiter is one caller queued for a grant of a V.
type Waiter[V any] struct {
	ready      chan struct{} // closed when granted
	granted    bool          // guarded by the queue's mutex
	value      V             // set with granted
	prev, next *Waiter[V]    // guarded by the queue's mutex
}

// Queue is a FIFO list of waiters for a grant of a V. The zero value is an empty queue.
type Queue[V any] struct {
	head, tail *Waiter[V]
	n          int
}

// Len returns the number of waiters queued.
func (q *Queue[V]) Len() int { return q.n }

// Empty reports whether nobody is queued.
func (q *Queue[V]) Empty() bool { return q.head == nil }

// Push queues a new waiter at the back and returns it, for Await.
func (q *Queue[V]) Push() *Waiter[V] {
	w := &Waiter[V]{ready: make(chan struct{}), prev: q.tail}
	if q.tail != nil {
		q.tail.next = w
	} else {
		q.head = w
	}
	q.tail = w
	q.n++
	return w
}

// Grant takes the waiter at the front out of the queue, hands it v and wakes it. It reports
// false, doing nothing, when the queue is empty.
func (q *Queue[V]) Grant(v V) bool {
	w := q.head
	if w == nil {
		return false
	}
	q.remove(w)
	w.granted = true
	w.value = v
	close(w.ready)
	return true
}

func (q *Queue[V]) remove(w *Waiter[V]) {
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
	q.n--
}

// Result is how Await ended.
type Result int

const (
	// Granted: the waiter holds its grant, the value Await returns.
	Granted Result = iota + 1
	// TimedOut: the wait ended first; the waiter left the queue without a grant.
	TimedOut
	// Cancelled: the caller's context ended first; the waiter left the queue without a grant.
	Cancelled
	// CancelledGranted: the caller's context ended, but the grant came too (the two raced). The
	// caller's cancellation wins, so that a caller whose context has ended never holds a grant:
	// the caller must give back the value Await returns.
	CancelledGranted
)

// Await waits, with mu (the queue's mutex) not held, for w's grant, maxWait or ctx, whichever
// comes first. To leave the queue it takes mu and calls left, when not nil, with mu held, so
// that the owner's counts of waiters change in the same step.
func (q *Queue[V]) Await(ctx context.Context, w *Waiter[V], maxWait time.Duration, mu sync.Locker, left func()) (V, Result) {
	timer := time.NewTimer(maxWait)
	defer timer.Stop()
	select {
	case <-w.ready:
		if ctx.Err() != nil {
			return w.value, CancelledGranted
		}
		return w.value, Granted
	case <-timer.C:
		if q.leave(w, mu, left) {
			return w.value, Granted
		}
		var zero V
		return zero, TimedOut
	case <-ctx.Done():
		if q.leave(w, mu, left) {
			return w.value, CancelledGranted
		}
		var zero V
		return zero, Cancelled
	}
}

// leave takes w out of the queue, or reports that it was granted in the meantime.
func (q *Queue[V]) leave(w *Waiter[V], mu sync.Locker, left func()) (granted bool) {
	mu.Lock()
	defer mu.Unlock()
	if w.granted {
		return true
	}
	q.remove(w)
	if left != nil {
		left()
	}
	return false
}
