package bulkhead

import (
	"context"
	"time"

	"github.com/levee-go/levee/internal/waiters"
)

// wait is the slow path of Acquire: queue up and wait for a permit, MaxWaitDuration or ctx,
// whichever comes first.
func (b *Bulkhead) wait(ctx context.Context) error {
	b.mu.Lock()
	b.waiting.Add(1)
	// Permits released before this caller announced itself may still be free: serve the
	// callers queued earlier first, then this one if the queue is empty.
	b.grantLocked()
	if b.queue.Empty() && b.enter() {
		b.waiting.Add(-1)
		b.mu.Unlock()
		b.publish(EventCallPermitted)
		return nil
	}
	w := b.queue.Push()
	maxWait := time.Duration(b.maxWait.Load()) // read under mu: a ChangeConfig is before or after
	b.mu.Unlock()

	switch _, res := b.queue.Await(ctx, w, maxWait, &b.mu, b.left); res {
	case waiters.Granted:
		b.publish(EventCallPermitted)
		return nil
	case waiters.TimedOut:
		b.publish(EventCallRejected)
		return b.fullErr
	case waiters.CancelledGranted:
		b.release(false)
	}
	b.publish(EventCallRejected)
	return ctx.Err()
}

// left counts a waiter that left the queue without a permit; b.mu is held.
func (b *Bulkhead) left() { b.waiting.Add(-1) }

// grantLocked hands free permits to the queued callers in arrival order. b.mu must be held.
func (b *Bulkhead) grantLocked() {
	for !b.queue.Empty() {
		if !b.enter() {
			return
		}
		b.queue.Grant(struct{}{})
		b.waiting.Add(-1)
	}
}
