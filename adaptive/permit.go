package adaptive

import (
	"context"
	"time"

	"github.com/levee-go/levee/internal/reject"
	"github.com/levee-go/levee/internal/safe"
)

// Permit is the right to run one call, taken by Acquire. It is a small value: hold it for the
// length of the call, then end it with exactly one of OnSuccess, OnDropped, OnIgnore or
// Record, as Netflix's Limiter.Listener. Ending it gives the slot back, lets the limiter learn
// from the call's latency and serves the next queued caller. The limiter does not know which
// caller holds which permit, so a permit ended twice gives back someone else's slot: end each
// permit once (Execute does). The methods of the zero Permit, the one returned with an error,
// do nothing.
type Permit struct {
	l        *Limiter
	started  time.Time
	round    uint64
	inFlight int

	// A permit of a PartitionedLimiter has pl and its partition's index instead of l.
	pl   *PartitionedLimiter
	part int
}

// Acquire takes a permit for one call. It returns at once with a permit when fewer calls than
// the limit run and nobody is queued. Otherwise, when fewer than MaxQueued callers wait, it
// queues (first come, first served) for at most MaxWaitDuration; else, or when the wait ends
// without a permit, it returns l's *LimitExceededError, which matches ErrLimitExceeded and is
// the same value for every rejection by l (treat it as read-only). When ctx ends first, or has
// already ended, it returns an error matching ctx.Err() and takes no permit. A nil ctx means
// context.Background(); a nil l returns ErrNilLimiter. It publishes CALL_PERMITTED or
// CALL_REJECTED. Neither the admission nor the rejection allocates; a caller that queues does.
func (l *Limiter) Acquire(ctx context.Context) (Permit, error) {
	if l.unset() {
		return Permit{}, ErrNilLimiter
	}
	ctx = safe.Ctx(ctx)
	if err := ctx.Err(); err != nil {
		l.reject()
		return Permit{}, err
	}
	l.mu.Lock()
	if l.admitLocked() {
		p := Permit{l: l, started: time.Now(), round: l.round, inFlight: l.inFlight}
		l.mu.Unlock()
		l.publish(EventCallPermitted, -1)
		return p, nil
	}
	if l.queue.Len() >= l.cfg.MaxQueued {
		l.rejected++
		l.mu.Unlock()
		l.publish(EventCallRejected, -1)
		return Permit{}, l.fullErr
	}
	return l.wait(ctx) // unlocks l.mu
}

func (l *Limiter) reject() {
	l.mu.Lock()
	l.rejected++
	l.mu.Unlock()
	l.publish(EventCallRejected, -1)
}

// OnSuccess ends a call that ran to completion, whatever its result: its latency is a
// measurement of the dependency's load (Netflix's Listener.onSuccess).
func (p Permit) OnSuccess() { p.end(sampleSuccess) }

// OnDropped ends a call that the dependency dropped or that timed out: a sign of overload,
// which lowers the limit (Netflix's Listener.onDropped).
func (p Permit) OnDropped() { p.end(sampleDropped) }

// OnIgnore ends a call without learning from it, for a call that did not load the dependency
// as usual: cancelled by its caller, refused before it ran, failed in the caller's own code
// (Netflix's Listener.onIgnore).
func (p Permit) OnIgnore() { p.end(sampleIgnore) }

// Record ends the call with the outcome err, classified as Execute classifies it: nil and
// ordinary errors are OnSuccess; an error matching context.DeadlineExceeded (a
// timelimiter.TimeoutError does) is OnDropped; context.Canceled, a levee rejection by an inner
// pattern and a *levee.PanicError are OnIgnore.
func (p Permit) Record(err error) { p.end(classify(err)) }

func classify(err error) sampleKind {
	switch {
	case err == nil:
		return sampleSuccess
	case isPanic(err), reject.Is(err), safe.Is(err, context.Canceled):
		return sampleIgnore
	case safe.Is(err, context.DeadlineExceeded):
		return sampleDropped
	}
	return sampleSuccess
}

func isPanic(err error) bool {
	_, ok := err.(*safe.PanicError)
	return ok
}

func (p Permit) end(kind sampleKind) {
	if p.pl != nil {
		p.pl.end(p, kind)
		return
	}
	l := p.l
	if l.unset() {
		return
	}
	l.mu.Lock()
	if l.inFlight == 0 { // an unmatched end must not create a slot
		l.mu.Unlock()
		return
	}
	changed := l.finishLocked(kind, p.started, p.round, p.inFlight)
	l.grantLocked()
	l.mu.Unlock()
	if changed >= 0 {
		l.publish(EventLimitChanged, changed)
	}
	if l.released.Active() {
		l.released.Publish(struct{}{})
	}
}
