package adaptive

import (
	"context"
	"time"
)

// waiter is one caller queued for a permit.
type waiter struct {
	ready      chan struct{} // closed when the permit is granted
	granted    bool          // guarded by Limiter.mu
	permit     Permit        // set with granted
	prev, next *waiter       // guarded by Limiter.mu
}

// waitQueue is an intrusive FIFO list, so that a waiter that gives up leaves in O(1).
type waitQueue struct{ head, tail *waiter }

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

// wait is the slow path of Acquire, entered with l.mu held: queue up and wait for a permit,
// MaxWaitDuration or ctx, whichever comes first.
func (l *Limiter) wait(ctx context.Context) (Permit, error) {
	w := &waiter{ready: make(chan struct{})}
	l.queue.push(w)
	l.queued++
	l.mu.Unlock()

	timer := time.NewTimer(l.cfg.MaxWaitDuration)
	defer timer.Stop()
	select {
	case <-w.ready:
		// The grant and the cancellation may have raced; the caller's cancellation wins, so
		// that a caller whose context has ended never holds a permit.
		if err := ctx.Err(); err != nil {
			l.giveBack(w.permit)
			l.reject()
			return Permit{}, err
		}
		l.publish(EventCallPermitted, -1)
		return w.permit, nil
	case <-timer.C:
		if l.leave(w) {
			l.publish(EventCallPermitted, -1)
			return w.permit, nil
		}
		l.reject()
		return Permit{}, l.fullErr
	case <-ctx.Done():
		if l.leave(w) {
			l.giveBack(w.permit)
		}
		l.reject()
		return Permit{}, ctx.Err()
	}
}

// leave takes w out of the queue, or reports that it was granted a
// permit in the meantime.
func (l *Limiter) leave(w *waiter) (granted bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w.granted {
		return true
	}
	l.queue.remove(w)
	l.queued--
	return false
}

// giveBack returns the permit of a caller whose context ended as it was granted: the caller
// counts as rejected, not permitted.
func (l *Limiter) giveBack(p Permit) {
	l.mu.Lock()
	l.permitted--
	l.mu.Unlock()
	p.OnIgnore()
}

// grantLocked hands free slots to the queued callers in arrival order. l.mu must be held.
func (l *Limiter) grantLocked() {
	for w := l.queue.head; w != nil && l.inFlight < l.limit; w = l.queue.head {
		l.queue.remove(w)
		l.queued--
		l.inFlight++
		l.permitted++
		w.granted = true
		w.permit = Permit{l: l, started: time.Now(), round: l.round, inFlight: l.inFlight}
		close(w.ready)
	}
}
