package adaptive

import (
	"context"
	"time"
)

// Admit is Acquire returning the permit as a levee.Permit (written as the interface literal
// levee.Permit is an alias of, so that this pattern package needs no import of levee), so that l joins a pipeline, a
// levee.Patterns or a server in a bulkhead's place (levee.Admitter): the pipeline ends the
// permit with the call's outcome, OnSuccess, OnError (Record's classification) or Release
// (OnIgnore). It returns Acquire's errors with a nil permit. Boxing the permit allocates once
// per admitted call; Execute and Decorator do not.
func (l *Limiter) Admit(ctx context.Context) (interface {
	OnSuccess()
	OnError(err error)
	Release()
}, error) {
	p, err := l.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Admit is Acquire (the partition ctx names, WithPartition) returning the permit as a
// levee.Permit, as Limiter.Admit.
func (l *PartitionedLimiter) Admit(ctx context.Context) (interface {
	OnSuccess()
	OnError(err error)
	Release()
}, error) {
	p, err := l.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// OnError ends the call with the outcome err, as Record does: it makes Permit a levee.Permit.
func (p Permit) OnError(err error) { p.Record(err) }

// Release ends the call without learning from it, as OnIgnore does: for a call that did not
// run, or that its caller cancelled. It makes Permit a levee.Permit.
func (p Permit) Release() { p.OnIgnore() }

// RetryAfter returns how long a caller refused now should wait before it tries again: 0 when
// a call would be admitted at once (fewer calls run than the limit and nobody is queued);
// otherwise the lowest latency the limiter measured (Metrics.NoLoadLatency), the soonest a
// call running now can be expected to end and free its slot, and 0 before any call was
// measured. It makes l a levee.RetryAdvisor, read by leveehttp's and leveegrpc's servers for
// their Retry-After and pushback (a 0 there means their configured default). A nil l
// returns 0.
func (l *Limiter) RetryAfter() time.Duration {
	if l.unset() {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inFlight < l.limit && l.queue.Empty() {
		return 0
	}
	return l.noLoadLocked()
}

// PrioritizedLimiter is a Limiter whose calls a Prioritizer may shed, made by
// Prioritizer.Limiter: it joins a pipeline, a levee.Patterns or a server in a bulkhead's place
// (levee.Admitter), each admission being Prioritizer.Acquire(ctx, l) at the level ctx carries.
type PrioritizedLimiter struct {
	p *Prioritizer
	l *Limiter
}

// Limiter returns l with its calls prioritized by p, as a levee.Admitter. Register l with p
// so that its queue counts for the shedding.
func (p *Prioritizer) Limiter(l *Limiter) *PrioritizedLimiter {
	return &PrioritizedLimiter{p: p, l: l}
}

// Admit is Prioritizer.Acquire(ctx, l) returning the permit as a levee.Permit: a shed call
// gets the prioritizer's *ShedError, a refused one the limiter's errors. A nil pl returns
// ErrNilLimiter.
func (pl *PrioritizedLimiter) Admit(ctx context.Context) (interface {
	OnSuccess()
	OnError(err error)
	Release()
}, error) {
	if pl == nil {
		return nil, ErrNilLimiter
	}
	p, err := pl.p.Acquire(ctx, pl.l)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// RetryAfter is the limiter's RetryAfter; 0 for a nil pl.
func (pl *PrioritizedLimiter) RetryAfter() time.Duration {
	if pl == nil {
		return 0
	}
	return pl.l.RetryAfter()
}

// NotifyRelease is the Limiter's NotifyRelease: a permit of the limiter coming free. A nil pl
// returns a stop that does nothing.
func (pl *PrioritizedLimiter) NotifyRelease(wake func()) (stop func()) {
	if pl == nil {
		return func() {}
	}
	return pl.l.NotifyRelease(wake)
}

// NotifyRelease calls wake each time a permit of l comes free (a call ended, recorded or
// released), on the goroutine that ended it, outside l's locks, until stop is called. It is
// how a stream held by PauseWhileOpen on a refusal of l learns that it may try again: with no
// latency measured yet, RetryAfter has no wait to offer. wake must be quick. A nil l or wake
// returns a stop that does nothing.
func (l *Limiter) NotifyRelease(wake func()) (stop func()) {
	if l == nil || wake == nil {
		return func() {}
	}
	return l.released.Subscribe(func(struct{}) { wake() })
}

// NotifyRelease calls wake each time a permit of any partition of l comes free, as
// Limiter.NotifyRelease does for a Limiter.
func (l *PartitionedLimiter) NotifyRelease(wake func()) (stop func()) {
	if l == nil || wake == nil {
		return func() {}
	}
	return l.released.Subscribe(func(struct{}) { wake() })
}
