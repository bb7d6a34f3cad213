package operators

import (
	"context"
	"fmt"
	"time"

	"github.com/levee-go/levee/internal/safe"
	"github.com/levee-go/levee/timelimiter"
	"github.com/reactivex/rxgo/v2"
)

// TimeLimiter returns an Operator that bounds the time of each subscription with
// tl.TimeoutDuration, as stream.Subscribe's TimeLimiter does. bounds says what is bounded (0
// means BoundEachElement, Resilience4j's TimeLimiter on a Flux: the first item within the
// timeout of the subscription, and each next one, or the end, within the timeout of the one
// before). BoundFirstElement and BoundGap time the upstream only: the clock stops while the
// consumer takes an item, so backpressure is never taken for a slow upstream. BoundStream
// bounds the whole subscription, waiting for the consumer included.
//
// At a limit the upstream is cancelled and the subscription ends at once with an error item
// carrying a *timelimiter.TimeoutError (errors.Is timelimiter.ErrTimeout and
// context.DeadlineExceeded). rxgo itself ends a subscription whose context passed its deadline
// by closing the channel, which looks like a clean completion; levee says it timed out.
//
// DisableCancelRunningFuture does not apply: past the limit nothing the upstream emits could
// be delivered, so it is always cancelled.
//
// One outcome is recorded per subscription, with its whole duration: SUCCESS when the
// upstream completes, ERROR when it emits an error item (forwarded, and the upstream
// cancelled), TIMEOUT at a limit. When the consumer cancels, the outcome is CircuitBreaker's:
// SUCCESS if an item had come from the upstream, nothing otherwise. An error item the
// upstream sent before the consumer cancelled is still an ERROR, unless it is that
// cancellation. An end of the upstream seen only after the consumer cancelled counts as the
// cancellation: rxgo ends a subscription whose context is done the way it ends one that
// completed, so the two cannot be told apart. Resilience4j's Flux operator also publishes a
// SUCCESS per item. TimeLimiter returns an error for bounds outside
// the three above; a nil tl fails every subscription with timelimiter.ErrNilTimeLimiter.
func TimeLimiter(tl *timelimiter.TimeLimiter, bounds TimeBound) (Operator, error) {
	if bounds == 0 {
		bounds = BoundEachElement
	} else if !validBounds(bounds) {
		return nil, fmt.Errorf("operators: TimeLimiter bounds must be a combination of BoundFirstElement, BoundGap and BoundStream, got %d", bounds)
	}
	return func(up rxgo.Observable) rxgo.Observable {
		return guarded(up, func(ctx context.Context, open func() (*upstream, error), next chan<- rxgo.Item) {
			if tl == nil {
				fail(ctx, next, timelimiter.ErrNilTimeLimiter)
				return
			}
			limitSubscription(ctx, tl, bounds, open, next)
		})
	}, nil
}

func limitSubscription(ctx context.Context, tl *timelimiter.TimeLimiter, bounds TimeBound,
	open func() (*upstream, error), next chan<- rxgo.Item) {
	timeout := tl.Config().TimeoutDuration
	start := time.Now()
	var idleT *time.Timer
	var idle, whole <-chan time.Time
	if bounds&BoundStream != 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		whole = t.C
	}
	if bounds&BoundFirstElement != 0 {
		idleT = time.NewTimer(timeout)
		idle = idleT.C
	}
	defer func() {
		if idleT != nil {
			idleT.Stop()
		}
	}()
	u, err := open()
	if err != nil {
		fail(ctx, next, err)
		return
	}
	defer u.stop()

	done := ctx.Done()
	items := 0 // value items taken from the upstream
	expire := func() {
		u.close()
		terr := &timelimiter.TimeoutError{Name: tl.Name(), Timeout: timeout}
		tl.OnError(time.Since(start), terr)
		fail(ctx, next, terr)
	}
	for {
		it, ok, expired := u.receiveBefore(done, idle, whole)
		switch {
		case expired:
			expire()
			return
		case ok && it.E != nil:
			// An error the upstream emitted counts even if the consumer has left since,
			// unless it is that departure.
			u.close()
			switch {
			case !safe.CallerCancelled(ctx, it.E):
				tl.OnError(time.Since(start), it.E)
			case items > 0: // the upstream reports the consumer's cancellation
				tl.OnSuccess(time.Since(start))
			}
			fail(ctx, next, it.E)
			return
		case !ok || ctx.Err() != nil:
			// The end of the upstream counts only while the consumer is there: rxgo ends a
			// subscription whose context is done just as one that completed. A consumer that
			// cancels after an item came is a success, as for CircuitBreaker.
			if (!ok && ctx.Err() == nil) || items > 0 {
				tl.OnSuccess(time.Since(start))
			}
			return
		}
		items++
		if idle != nil {
			idleT.Stop()
			idle = nil
		}
		sent, expired := sendBefore(next, it, done, whole)
		if expired {
			expire()
			return
		}
		if !sent { // the consumer cancelled, after an item came
			tl.OnSuccess(time.Since(start))
			return
		}
		if bounds&BoundGap != 0 {
			if idleT == nil {
				idleT = time.NewTimer(timeout)
			} else {
				idleT.Reset(timeout)
			}
			idle = idleT.C
		}
	}
}

// receiveBefore is receive with two deadlines; expired reports that one passed first.
func (u *upstream) receiveBefore(done <-chan struct{}, idle, whole <-chan time.Time) (it rxgo.Item, ok, expired bool) {
	select {
	case it, ok = <-u.ch:
	default:
		select {
		case it, ok = <-u.ch:
		case <-idle:
			return it, false, true
		case <-whole:
			return it, false, true
		case <-done:
			// The consumer left; an item the upstream has already sent still counts.
			select {
			case it, ok = <-u.ch:
				if !ok {
					return it, false, false
				}
			default:
				return it, false, false
			}
		}
	}
	if ok {
		u.took()
	}
	return it, ok, false
}

// sendBefore is send with a deadline; expired reports that it passed first.
func sendBefore(out chan<- rxgo.Item, it rxgo.Item, done <-chan struct{}, whole <-chan time.Time) (sent, expired bool) {
	select {
	case out <- it:
		return true, false
	default:
	}
	select {
	case out <- it:
		return true, false
	case <-whole:
		return false, true
	case <-done:
		return false, false
	}
}
