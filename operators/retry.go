package operators

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/internal/chans"
	"github.com/levee-go/levee/internal/safe"
	"github.com/levee-go/levee/retry"
	"github.com/reactivex/rxgo/v2"
)

// Retry returns an Observable that subscribes to the Observable src builds and, when that
// attempt fails, builds and subscribes to a fresh one after r's wait, as Resilience4j's
// RetryOperator on a Flux with one retry context per subscription:
//
//   - an attempt fails with its first error item, or with the error src returned or the
//     panic it raised (a *levee.PanicError) while building it; the attempt is then cancelled
//     and r decides, as for any call, whether to retry it and after how long. When the
//     attempts run out the subscription ends with an error item carrying r's
//     *retry.MaxRetriesExceededError (or the error itself when it is not retried). Levee's
//     own rejections are not retried unless r's RetryRejections lists them;
//   - the items of a failed attempt have already been emitted when the next attempt starts,
//     which may emit them again (standard Rx retry);
//   - with RetryOnResultPredicate, each value item is offered to it before it is emitted; a
//     match with attempts left is not emitted, and the attempt is cancelled and retried.
//     On the last attempt a matching item is emitted, and with FailAfterMaxAttempts the
//     subscription ends after the upstream completes with a *retry.MaxRetriesExceededError;
//   - the consumer's cancellation ends the subscription at once, in an attempt or in a wait,
//     without recording anything.
//
// src is called once per attempt, with a context cancelled when the attempt ends, so every
// attempt subscribes to a fresh Observable: rxgo's own Retry observes the same Observable
// again, which over Create or FromChannel silently completes and over FlatMap panics. A src
// that hands out the same single-use Observable again is refused with an error item wrapping
// ErrSingleUse and the previous attempt's error, without consulting r; so is an attempt whose
// first error item is such a refusal (a Lazy inside the Observable src builds refused it).
//
// To retry a guarded stream, let src build the whole chain, so that each attempt takes its
// own permissions:
//
//	operators.Retry(rt, func(ctx context.Context) (rxgo.Observable, error) {
//		return operators.CircuitBreaker(cb)(operators.Lazy(open)), nil
//	})
//
// A nil r fails every subscription with retry.ErrNilRetry, a nil src with levee.ErrNilCall.
func Retry(r *retry.Retry, src Source) rxgo.Observable {
	onResult := r != nil && r.Config().RetryOnResultPredicate != nil
	seen := new(observed)
	return deferred(func(ctx context.Context, next chan<- rxgo.Item) {
		switch {
		case r == nil:
			fail(ctx, next, retry.ErrNilRetry)
			return
		case src == nil:
			fail(ctx, next, levee.ErrNilCall)
			return
		}
		rt := retrying{ctx: ctx, src: src, next: next, seen: seen, rc: r.NewContext(), onResult: onResult}
		rt.run()
	})
}

// retrying is one subscription of Retry.
type retrying struct {
	ctx      context.Context
	src      Source
	next     chan<- rxgo.Item
	seen     *observed
	rc       retry.Context
	onResult bool
	lastErr  error
}

// attemptEnd is how one attempt ended.
type attemptEnd struct {
	end     ending
	err     error
	restart bool          // a value matched RetryOnResultPredicate with attempts left
	wait    time.Duration // before the restart
}

func (rt *retrying) run() {
	for {
		a := rt.attempt()
		switch {
		case a.end == cancelled:
			return
		case a.restart:
			if !rt.sleep(a.wait) {
				return
			}
		case a.end == completed:
			rt.rc.OnSuccess()
			if err := rt.rc.Err(); err != nil { // FailAfterMaxAttempts on a matching item
				fail(rt.ctx, rt.next, err)
			}
			return
		default:
			wait, again := rt.rc.OnError(a.err)
			if !again {
				cause := rt.rc.Err()
				if cause == nil {
					// A result had already stopped the retry on the last attempt: close the
					// call's count and end with the attempt's own error.
					rt.rc.OnSuccess()
					cause = a.err
				}
				fail(rt.ctx, rt.next, cause)
				return
			}
			rt.lastErr = a.err
			if !rt.sleep(wait) {
				return
			}
		}
	}
}

// attempt builds and relays one attempt under a context of its own.
func (rt *retrying) attempt() attemptEnd {
	ctx, cancel := context.WithCancel(rt.ctx)
	defer cancel()
	obs, err := safe.Call(ctx, rt.src)
	if err != nil {
		if rt.ctx.Err() != nil {
			return attemptEnd{end: cancelled}
		}
		return attemptEnd{end: failed, err: err}
	}
	u, err := open(ctx, obs, rt.seen)
	if errors.Is(err, ErrSingleUse) {
		return rt.singleUse(err)
	}
	if err != nil {
		return attemptEnd{end: failed, err: err}
	}
	defer u.stop()
	done := rt.ctx.Done()
	for {
		it, ok := u.receive(done)
		switch {
		case !ok || rt.ctx.Err() != nil:
			if rt.ctx.Err() != nil {
				return attemptEnd{end: cancelled}
			}
			return attemptEnd{end: completed}
		case it.E != nil:
			if safe.Is(it.E, ErrSingleUse) { // a Lazy within src's chain refused the same Observable
				return rt.singleUse(it.E)
			}
			return attemptEnd{end: failed, err: it.E}
		}
		if rt.onResult {
			if wait, again := rt.rc.OnResult(it.V); again {
				return attemptEnd{restart: true, wait: wait}
			}
		}
		if !chans.Send(rt.next, it, done) {
			return attemptEnd{end: cancelled}
		}
	}
}

// singleUse ends the subscription with err, an ErrSingleUse refusal, without consulting the
// retry: the next attempt would be refused again.
func (rt *retrying) singleUse(err error) attemptEnd {
	if rt.lastErr != nil {
		err = fmt.Errorf("%w; the attempt before failed with: %w", err, rt.lastErr)
	}
	fail(rt.ctx, rt.next, err)
	return attemptEnd{end: cancelled} // reported: the subscription just stops
}

// sleep waits d before the next attempt and reports whether the consumer is still there.
func (rt *retrying) sleep(d time.Duration) bool {
	if d <= 0 {
		return rt.ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-rt.ctx.Done():
		return false
	}
}
