package stream

import (
	"context"
	"fmt"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/internal/chans"
	"github.com/levee-go/levee/internal/safe"
	"github.com/levee-go/levee/retry"
)

// TimeBound names what the TimeLimiter of a subscription bounds; the bounds combine with |.
// Each bounded stretch may last the limiter's TimeoutDuration; at the limit the attempt's
// context is cancelled and the stream fails with a *timelimiter.TimeoutError, which matches
// timelimiter.ErrTimeout and context.DeadlineExceeded.
type TimeBound uint8

const (
	// BoundFirstElement bounds the time from the start of an attempt to its first element.
	BoundFirstElement TimeBound = 1 << iota
	// BoundGap bounds the time between two elements: from the moment emit returns to the
	// next call of emit.
	BoundGap
	// BoundStream bounds the whole attempt, from its start to the Source's return, time
	// spent waiting for the consumer included.
	BoundStream

	// BoundEachElement is Resilience4j's TimeLimiter on a Flux, the default: the first
	// element within the timeout of the start, and each next one within the timeout of the
	// one before.
	BoundEachElement = BoundFirstElement | BoundGap
)

// FirstElement and Gap time the Source only: time spent in emit waiting for a slow consumer
// does not count, so backpressure is never mistaken for a slow source.

// TimeLimit chooses what the subscription's TimeLimiter bounds (default BoundEachElement).
// It needs a Patterns.TimeLimiter, and b must name at least one bound.
//
// It applies to Subscribe.
func TimeLimit(b TimeBound) Option {
	return Option{name: "TimeLimit", scope: perSubscription, apply: func(s *settings) {
		if b == 0 || b&^(BoundFirstElement|BoundGap|BoundStream) != 0 {
			s.invalid("TimeLimit must be a combination of BoundFirstElement, BoundGap and BoundStream, got %d", b)
			return
		}
		s.bounds, s.boundsSet = b, true
	}}
}

// WithFallbackSource replaces a failed stream with the stream fn produces: once the patterns
// have given up (retry exhausted, breaker open, ...), fn(ctx, cause, emit) runs with the error
// the stream failed with and emits the replacement elements, marked Fallback. Elements the
// failed stream delivered before it failed stay delivered; the replacement follows them, as
// Reactor's onErrorResume. fn is called at most once per subscription, outside every pattern,
// and not when the consumer cancelled.
//
// When fn returns nil the stream ends cleanly. An error whose chain holds cause (cause itself,
// to decline) ends the stream as it is; any other error, or a panic, ends it with a
// *fallback.Error holding both that error and cause.
//
// The type of fn must be func(context.Context, error, func(T) error) error for Subscribe[T];
// Subscribe refuses any other. It applies to Subscribe. A nil fn is refused.
func WithFallbackSource[T any](fn func(ctx context.Context, cause error, emit func(T) error) error) Option {
	return Option{name: "WithFallbackSource", scope: perSubscription, apply: func(s *settings) {
		if fn == nil {
			s.invalid("WithFallbackSource needs a function, got nil")
			return
		}
		s.fbSource = fn
	}}
}

// Subscribe starts the stream src under the patterns ps, guarding the whole stream as one call
// (Resilience4j's reactive operators), and returns its elements. The output is closed when the
// stream ends: cleanly; after a last Item carrying the error it failed with; or when ctx is
// done, without such an item.
//
// An attempt runs the patterns in the default pipeline's order,
// Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(src))))), each in its per-subscription
// form:
//
//   - CircuitBreaker: permission is asked when the attempt starts; a refusal fails it without
//     calling src. The attempt is recorded, with its whole duration, as a success when src
//     returns nil and as a failure (classified by OnError) when it fails. When the consumer
//     cancels before src returns, the permission is released unrecorded if src had emitted
//     nothing, and the attempt counts as a success if it had emitted an element. Elements are
//     not offered to RecordResultPredicate.
//   - RateLimiter: one permission per attempt (Permits for more), waited for as
//     AcquirePermission allows; a cancelled wait hands its reservation back. With
//     DrainPermissionsOnResult, every element and the final error are offered to it.
//   - TimeLimiter: bounds the attempt as TimeLimit says (default BoundEachElement); at the
//     limit the attempt's context is cancelled and the attempt fails with a
//     *timelimiter.TimeoutError at once, even if src ignores its context (src then finishes on
//     its own, still holding its bulkhead permit, and the output is closed only once it has). One SUCCESS or ERROR/TIMEOUT per attempt,
//     agreeing with the breaker: when the consumer cancels (or retry starts over) after src
//     emitted an element, SUCCESS; before any element, nothing.
//     DisableCancelRunningFuture does not apply: past the limit emit refuses every element,
//     so a source left running could do nothing useful.
//   - Bulkhead: a permit is held for the attempt's whole life and released exactly once:
//     with CALL_FINISHED when src returned or had emitted, without it when the attempt was
//     cancelled before any element.
//   - Retry: a failed attempt is retried by calling src again after the retry's wait (the
//     elements it emitted stay delivered); rejections are not retried unless RetryRejections
//     lists them.
//     With RetryOnResultPredicate each element is offered to it before delivery; a match
//     with attempts left is not delivered and restarts the stream.
//
// WithFallbackSource answers a stream that failed for good. A panic in src is a failure
// whose error is a *levee.PanicError. Subscribe returns an error, and starts nothing, when an
// option is invalid or does not apply, or when src is nil (levee.ErrNilCall). A nil ctx means
// context.Background().
//
// Subscribe runs one goroutine per subscription and one per attempt, which ends when src
// returns. Once the output is closed every attempt has ended and released its permits, an
// attempt abandoned at a time limit included: its timeout is delivered (or retried) at the
// limit, and the output stays open until its src has returned, so a src that ignores its
// context holds the output open as long as it runs.
func Subscribe[T any](ctx context.Context, ps levee.Patterns, src Source[T], opts ...Option) (<-chan Item[T], error) {
	set, err := collect("Subscribe", perSubscription, opts)
	if err != nil {
		return nil, err
	}
	if src == nil {
		return nil, levee.ErrNilCall
	}
	s := &subscription[T]{ctx: safe.Ctx(ctx), ps: ps, src: src, out: make(chan Item[T], set.buffer)}
	if set.fbSource != nil {
		fb, ok := set.fbSource.(func(context.Context, error, func(T) error) error)
		if !ok {
			return nil, fmt.Errorf("stream: Subscribe needs a WithFallbackSource function of type %T, got %T",
				(func(context.Context, error, func(T) error) error)(nil), set.fbSource)
		}
		s.fallback = fb
	}
	if tl := ps.TimeLimiter; tl != nil {
		s.bounds, s.timeout = BoundEachElement, tl.Config().TimeoutDuration
		if set.boundsSet {
			s.bounds = set.bounds
		}
	} else if set.boundsSet {
		return nil, fmt.Errorf("stream: TimeLimit needs a Patterns.TimeLimiter")
	}
	if ps.Retry != nil {
		s.retryOnResult = ps.Retry.Config().RetryOnResultPredicate != nil
	}
	s.permits = max(set.permits, 1)
	if ps.RateLimiter != nil {
		s.drainOnResult = ps.RateLimiter.Config().DrainPermissionsOnResult != nil
	} else if set.permits != 0 {
		return nil, fmt.Errorf("stream: Permits needs a Patterns.RateLimiter")
	}
	go s.run()
	return s.out, nil
}

type subscription[T any] struct {
	ctx      context.Context // the consumer's
	ps       levee.Patterns
	src      Source[T]
	fallback func(context.Context, error, func(T) error) error
	out      chan Item[T]

	bounds  TimeBound
	timeout time.Duration
	permits int // rate-limiter permissions per attempt

	rc            retry.Context // owned by run; emit uses it only while run waits for the attempt
	retryOnResult bool
	drainOnResult bool

	abandoned []chan struct{} // the done channels of attempts abandoned at a time limit; owned by run
}

// run makes the attempts, then the fallback, and closes the output once every attempt's
// Source has returned, those abandoned at a time limit included.
func (s *subscription[T]) run() {
	defer func() {
		for _, done := range s.abandoned {
			<-done
		}
		close(s.out)
	}()
	s.rc = s.ps.Retry.NewContext()
	var cause error
	for n := 1; ; n++ {
		res := s.attempt(n)
		switch res.kind {
		case cancelled:
			return
		case completed:
			s.rc.OnSuccess()
			if cause = s.rc.Err(); cause == nil { // set with FailAfterMaxAttempts
				return
			}
		case restart:
			if !s.sleep(res.wait) {
				return
			}
			continue
		case failed:
			if s.ctx.Err() != nil {
				// The consumer left after the attempt failed: the patterns inside have
				// recorded the failure; there is nobody to retry or answer for.
				return
			}
			wait, again := s.rc.OnError(res.err)
			if again {
				if !s.sleep(wait) {
					return
				}
				continue
			}
			if cause = s.rc.Err(); cause == nil {
				// Without a Retry, or when a result had already stopped the retry on the last
				// attempt: close the call's count and end with the attempt's own error.
				s.rc.OnSuccess()
				cause = res.err
			}
		}
		break
	}
	s.fail(cause)
}

// sleep waits d for the next attempt and reports whether the consumer is still there.
func (s *subscription[T]) sleep(d time.Duration) bool {
	if d <= 0 {
		return s.ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.ctx.Done():
		return false
	}
}

// fail ends a stream that failed with cause: through the fallback source if there is one,
// else with a last Item carrying cause.
func (s *subscription[T]) fail(cause error) {
	if s.fallback != nil {
		fb := s.fallback
		a := s.newAttempt(0, func(ctx context.Context, emit func(T) error) error { return fb(ctx, cause, emit) })
		a.fallback = true
		a.run()
		a.close()
		switch {
		case a.err == nil:
			return
		case safe.CallerCancelled(s.ctx, a.err):
			return
		case safe.Is(a.err, cause):
			cause = a.err // cause itself (declined), or an error that already holds it
		default:
			cause = &fallback.Error{Name: "stream", Cause: cause, Err: a.err}
		}
	}
	chans.Send(s.out, Item[T]{Err: cause}, s.ctx.Done())
}
