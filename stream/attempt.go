package stream

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/internal/chans"
	"github.com/levee-go/levee/internal/safe"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/timelimiter"
)

// outcome is how an attempt ended, from the point of view of the patterns outside it.
type outcome uint8

const (
	completed outcome = iota // the Source returned nil
	failed                   // the attempt failed with err
	cancelled                // the consumer cancelled
	restart                  // retry matched an element and starts the stream over after wait
)

type attemptResult struct {
	kind outcome
	err  error
	wait time.Duration
}

// errRestart cancels an attempt whose element matched RetryOnResultPredicate.
var errRestart = errors.New("stream: attempt ended by retry to start over")

// errEmitAfterReturn is what emit returns once the Source has returned.
var errEmitAfterReturn = errors.New("stream: emit called after the source returned")

// attempt makes attempt n of the subscription through its patterns, outermost first, and
// records its outcome in each of them, innermost first.
func (s *subscription[T]) attempt(n int) attemptResult {
	if s.ctx.Err() != nil {
		return attemptResult{kind: cancelled}
	}
	cb, rl, tl := s.ps.CircuitBreaker, s.ps.RateLimiter, s.ps.TimeLimiter
	// The permit reports to the period that granted it and measures the attempt from its
	// grant; the zero Permit (no breaker) does nothing.
	var permit circuitbreaker.Permit
	if cb != nil {
		var err error
		if permit, err = cb.Acquire(); err != nil {
			return attemptResult{kind: failed, err: err}
		}
	}
	if rl != nil {
		if err := rl.AcquirePermission(s.ctx, s.permits); err != nil {
			if safe.CallerCancelled(s.ctx, err) {
				permit.Release()
				return attemptResult{kind: cancelled}
			}
			if errors.Is(err, ratelimiter.ErrInvalidPermits) {
				// Permits above LimitForPeriod is the subscriber's mistake, and src was never
				// called: nothing to charge to the dependency.
				permit.Release()
				return attemptResult{kind: failed, err: err}
			}
			permit.OnError(err)
			return attemptResult{kind: failed, err: err}
		}
	}

	a := s.newAttempt(n, s.src)
	a.bh = s.ps.Bulkhead
	if tl != nil {
		a.timeoutErr = &timelimiter.TimeoutError{Name: tl.Name(), Timeout: s.timeout}
		a.bounds, a.timeout = s.bounds, s.timeout
	}
	tlStart := time.Now()
	a.run()
	produced := a.close()
	end := time.Now()

	// The cause of the attempt's context says what ended it first: a limit, retry, the
	// consumer, or src returning (close's errEmitAfterReturn). What src returned before the
	// consumer left is recorded, however soon after it the consumer left.
	// An element being decided by the retry (its predicate, ConsumeResultBeforeRetryAttempt)
	// is waited for, so restarted is final: a match that counted the attempt ends it, and a
	// time limit that expired meanwhile does not count it a second time as a timeout. No
	// decision starts once close has run.
	var res attemptResult
	a.mu.Lock()
	dec := a.deciding
	a.mu.Unlock()
	if dec != nil {
		<-dec
	}
	a.mu.Lock()
	restarted := a.restarted
	a.mu.Unlock()
	switch cause := context.Cause(a.ctx); {
	case restarted:
		res = attemptResult{kind: restart, wait: a.restartWait}
	case a.timeoutErr != nil && cause == a.timeoutErr:
		res = attemptResult{kind: failed, err: a.timeoutErr}
	case cause == errRestart:
		res = attemptResult{kind: restart, wait: a.restartWait}
	case cause != errEmitAfterReturn:
		res = attemptResult{kind: cancelled} // the consumer left first: what src returned is moot
	case a.err == nil:
		res = attemptResult{kind: completed}
	default:
		res = attemptResult{kind: failed, err: a.err}
	}

	switch res.kind {
	case completed:
		if tl != nil {
			tl.OnSuccess(end.Sub(tlStart))
		}
		permit.OnSuccess()
	case failed:
		if tl != nil {
			tl.OnError(end.Sub(tlStart), res.err)
		}
		if rl != nil && s.drainOnResult {
			rl.OnError(res.err)
		}
		permit.OnError(res.err)
	default: // ended from outside: the consumer left, or retry starts over
		// Both patterns agree on an attempt ended from outside: a success once src has
		// emitted, nothing otherwise.
		if produced > 0 {
			if tl != nil {
				tl.OnSuccess(end.Sub(tlStart))
			}
			permit.OnSuccess()
		} else {
			permit.Release()
		}
	}
	return res
}

// streamAttempt is one run of a Source: the attempt's context, its emit function and its
// timers. run makes it in a goroutine of its own so that a time limit can end the attempt
// while a Source that ignores its context is still running.
type streamAttempt[T any] struct {
	s        *subscription[T]
	n        int // Item.Attempt
	src      Source[T]
	fallback bool // the fallback source: no patterns, no per-element hooks
	bh       *bulkhead.Bulkhead

	ctx    context.Context
	cancel context.CancelCauseFunc
	done   chan struct{} // closed when the goroutine running src returns
	err    error         // src's error, readable once done is closed

	bounds     TimeBound
	timeout    time.Duration
	timeoutErr *timelimiter.TimeoutError // the cause the attempt is cancelled with at a limit

	// mu serialises emit with itself and with close, so that an element is never sent after
	// the attempt is over, even by a Source that emits from another goroutine or too late.
	// It is held while emit waits for the consumer; close cancels ctx first to end that wait.
	mu          sync.Mutex
	over        bool
	produced    int         // elements the Source emitted while the attempt was live
	idle        *time.Timer // BoundFirstElement and BoundGap
	idleArmed   bool
	whole       *time.Timer // BoundStream
	restartWait time.Duration
	// restarted: an element matched the retry's predicate with attempts left, which counted
	// the attempt; it ends the attempt even when a time limit expired while it was decided.
	restarted bool
	deciding  chan struct{} // while the retry decides on an element, closed once it has
}

func (s *subscription[T]) newAttempt(n int, src Source[T]) *streamAttempt[T] {
	a := &streamAttempt[T]{s: s, n: n, src: src, done: make(chan struct{})}
	a.ctx, a.cancel = context.WithCancelCause(s.ctx)
	return a
}

// run starts the attempt and waits until src returns or, at a time limit, until the limit.
func (a *streamAttempt[T]) run() {
	a.mu.Lock()
	if a.bounds&BoundStream != 0 {
		a.whole = time.AfterFunc(a.timeout, a.expire)
	}
	if a.bounds&BoundFirstElement != 0 {
		a.idle, a.idleArmed = time.AfterFunc(a.timeout, a.expire), true
	}
	a.mu.Unlock()
	go a.body()
	select {
	case <-a.done:
	case <-a.ctx.Done():
		if a.timeoutErr != nil && context.Cause(a.ctx) == a.timeoutErr {
			// Abandon a Source that does not return at the limit; the subscription waits
			// for it before closing its output.
			a.s.abandoned = append(a.s.abandoned, a.done)
			return
		}
		<-a.done
	}
}

func (a *streamAttempt[T]) expire() { a.cancel(a.timeoutErr) }

// body runs src under a bulkhead permit, if any, in the attempt's goroutine.
func (a *streamAttempt[T]) body() {
	defer close(a.done)
	if a.bh != nil {
		if err := a.bh.Acquire(a.ctx); err != nil {
			a.close()
			a.err = err
			return
		}
	}
	err := a.call()
	interrupted := a.ctx.Err() != nil
	produced := a.close()
	if a.bh != nil {
		// As Reactor's bulkhead operator: a cancelled attempt that emitted nothing hands its
		// permit back without CALL_FINISHED; every other attempt ran.
		if produced == 0 && interrupted {
			a.bh.ReleasePermission()
		} else {
			a.bh.Release()
		}
	}
	a.err = err
}

func (a *streamAttempt[T]) call() (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = safe.NewPanicError(v)
		}
	}()
	return a.src(a.ctx, a.emit)
}

// close ends the attempt for emit and stops its timers; it returns the number of elements
// produced. It may be called more than once.
func (a *streamAttempt[T]) close() (produced int) {
	// Wake an emit blocked on the consumer so that it lets go of mu. The cause is kept when a
	// limit, retry or the consumer got there first.
	a.cancel(errEmitAfterReturn)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.over = true
	if a.idle != nil {
		a.idle.Stop()
	}
	if a.whole != nil {
		a.whole.Stop()
	}
	return a.produced
}

// emit delivers one element of the Source to the consumer; see Source.
func (a *streamAttempt[T]) emit(v T) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.over {
		return errEmitAfterReturn
	}
	if a.idleArmed {
		a.idle.Stop() // the Source's own time stops here; a limit that fired shows in ctx
		a.idleArmed = false
	}
	a.consumerLeft()
	if a.ctx.Err() != nil {
		return a.stopErr()
	}
	a.produced++
	if !a.fallback {
		if a.s.drainOnResult {
			a.s.ps.RateLimiter.OnResult(v)
		}
		if a.s.retryOnResult {
			// The retry decides without the lock (its predicate and
			// ConsumeResultBeforeRetryAttempt are user code, which may take long); the
			// attempt's end waits on deciding for the decision before reading restarted.
			dec := make(chan struct{})
			a.deciding = dec
			a.mu.Unlock()
			wait, again := a.s.rc.OnResult(v)
			a.mu.Lock()
			a.deciding = nil
			close(dec)
			if again {
				a.restartWait, a.restarted = wait, true
				a.cancel(errRestart)
				return errRestart
			}
			if a.over || a.ctx.Err() != nil { // the attempt ended while the retry decided
				a.consumerLeft()
				return a.stopErr()
			}
		}
	}
	if !chans.SendOr(a.s.out, Item[T]{Value: v, Attempt: a.n, Fallback: a.fallback}, a.ctx.Done(), a.s.ctx.Done()) {
		a.consumerLeft()
		return a.stopErr()
	}
	if a.bounds&BoundGap != 0 {
		if a.idle == nil {
			a.idle = time.AfterFunc(a.timeout, a.expire)
		} else {
			a.idle.Reset(a.timeout)
		}
		a.idleArmed = true
	}
	return nil
}

// consumerLeft ends the attempt from outside once the consumer's context is done. A context
// of the caller's own type reaches the attempt's only through a goroutine of package
// context's, a moment after it is done: until then emit watches the consumer's own.
func (a *streamAttempt[T]) consumerLeft() {
	if err := a.s.ctx.Err(); err != nil {
		a.cancel(err)
	}
}

// stopErr is emit's error once the attempt's context is done: the consumer's own error when
// it left, else what ended the attempt (a *timelimiter.TimeoutError, or retry starting over).
func (a *streamAttempt[T]) stopErr() error {
	if err := a.s.ctx.Err(); err != nil {
		return err
	}
	return context.Cause(a.ctx)
}
