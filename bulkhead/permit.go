package bulkhead

import (
	"context"
	"math"

	"github.com/levee-go/levee/internal/safe"
)

// Acquire takes a permit for one call, as Resilience4j's Bulkhead.acquirePermission. It
// returns nil when a permit is free, or becomes free within MaxWaitDuration; otherwise it
// returns b's *BulkheadFullError, which matches ErrBulkheadFull and is the same value for every
// rejection by b (treat it as read-only). It never waits past ctx: when ctx ends first, or has
// already ended, Acquire returns an error matching ctx.Err() and takes no permit. A nil ctx
// means context.Background().
//
// A permitted caller must give the permit back exactly once, with Release when the call ran
// (CALL_FINISHED event) or ReleasePermission when it was cancelled. Acquire publishes
// CALL_PERMITTED or CALL_REJECTED; a caller whose context ends first gets CALL_REJECTED too.
func (b *Bulkhead) Acquire(ctx context.Context) error {
	if b.unset() {
		return ErrNilBulkhead
	}
	ctx = safe.Ctx(ctx)
	if err := ctx.Err(); err != nil {
		b.publish(EventCallRejected)
		return err
	}
	if b.tryEnter() {
		b.publish(EventCallPermitted)
		return nil
	}
	if b.maxWait.Load() <= 0 {
		b.publish(EventCallRejected)
		return b.fullErr
	}
	return b.wait(ctx)
}

// TryAcquire takes a permit if one is free now, without waiting, and reports whether it did,
// publishing CALL_PERMITTED or CALL_REJECTED. With fair call handling it also refuses while
// callers are queued, so it never takes a permit ahead of them. A true result must be paired
// with Release or ReleasePermission. A nil b reports false.
func (b *Bulkhead) TryAcquire() bool {
	if b.unset() {
		return false
	}
	if b.tryEnter() {
		b.publish(EventCallPermitted)
		return true
	}
	b.publish(EventCallRejected)
	return false
}

// Release gives back the permit of a call that ran, and publishes CALL_FINISHED, as
// Resilience4j's Bulkhead.onComplete. The permit goes to the longest waiting caller, if any.
// A Release while no permit is in flight does nothing. The bulkhead does not know which
// caller holds which permit, though: a call released twice while other calls hold permits
// gives back one of theirs, and one more call than MaxConcurrentCalls may then run, so
// release each permit exactly once (Execute does).
func (b *Bulkhead) Release() {
	if !b.unset() {
		b.release(true)
	}
}

// ReleasePermission gives back a permit without publishing CALL_FINISHED, as Resilience4j's
// Bulkhead.releasePermission: for a call that was cancelled before or while it ran. Execute
// uses it when the caller's own context ended the call.
func (b *Bulkhead) ReleasePermission() {
	if !b.unset() {
		b.release(false)
	}
}

// ChangeConfig replaces b's configuration while calls are in flight, as Resilience4j's
// Bulkhead.changeConfig; like New it fills zero fields with their defaults and refuses a field
// out of range with an error naming it, changing nothing. To change one field, start from
// b.Config():
//
//	cfg := bh.Config()
//	cfg.MaxWaitDuration = 2 * time.Second
//	err := bh.ChangeConfig(cfg)
//
// A larger MaxConcurrentCalls hands the new permits to waiting callers at once. A smaller one
// never blocks: calls already running finish normally, and no new call is admitted until fewer
// than the new maximum are in flight; NoConcurrentCalls admits none. MaxWaitDuration and
// DisableFairCallHandling apply to the callers that arrive after the change: a caller already
// waiting keeps the deadline it started with and its place in the queue, which is always
// served first come, first served. Logger is replaced like the other fields: the same logger
// (as Config returns it) keeps its one consumer, another one takes its place, and nil stops
// the logging.
func (b *Bulkhead) ChangeConfig(cfg Config) error {
	if b.unset() {
		return ErrNilBulkhead
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.maxWait.Store(int64(cfg.MaxWaitDuration))
	b.fair.Store(!cfg.DisableFairCallHandling)
	b.setLoggerLocked(cfg.Logger)
	for {
		s := b.state.Load()
		_, in := unpack(s)
		if b.state.CompareAndSwap(s, pack(cfg.permits(), in)) {
			break
		}
	}
	b.grantLocked()
	return nil
}

// tryEnter is the lock-free fast path: one compare-and-swap when a permit is free. In fair
// mode it steps aside as soon as someone waits, so that the queue is served first.
func (b *Bulkhead) tryEnter() bool {
	for {
		if b.fair.Load() && b.waiting.Load() != 0 {
			return false
		}
		s := b.state.Load()
		if max, in := unpack(s); in >= max {
			return false
		}
		if b.state.CompareAndSwap(s, s+1) {
			return true
		}
	}
}

// enter takes a free permit regardless of waiters; the queue's own code calls it under mu.
func (b *Bulkhead) enter() bool {
	for {
		s := b.state.Load()
		if max, in := unpack(s); in >= max {
			return false
		}
		if b.state.CompareAndSwap(s, s+1) {
			return true
		}
	}
}

// release gives one permit back, hands it to the queue if anyone waits, and publishes
// CALL_FINISHED when finished is set.
func (b *Bulkhead) release(finished bool) {
	for {
		s := b.state.Load()
		if s&math.MaxUint32 == 0 {
			return // nothing in flight: an unmatched release must not create a permit
		}
		if b.state.CompareAndSwap(s, s-1) {
			break
		}
	}
	b.handOff()
	if finished {
		b.publish(EventCallFinished)
	}
}

// handOff serves queued callers with the permits that are free, when anyone waits.
func (b *Bulkhead) handOff() {
	if b.waiting.Load() == 0 {
		return
	}
	b.mu.Lock()
	b.grantLocked()
	b.mu.Unlock()
}
