package retry

import (
	"context"
	"time"

	"github.com/levee-go/levee/internal/safe"
)

// Execute runs call under r, retrying it as r's Config says, and returns the outcome of the last
// attempt, as Resilience4j's Retry.executeCallable:
//
//   - the value of the first attempt that succeeds (or whose result is not retried);
//   - the error of an attempt that is not retried, unchanged;
//   - a *MaxRetriesExceededError wrapping the last error when the attempts ran out on errors;
//   - the last result with a nil error when they ran out on results, or a
//     *MaxRetriesExceededError carrying it with FailAfterMaxAttempts;
//   - the caller's cancellation, at once and unchanged, when an attempt returns it (the call is
//     not retried and not counted);
//   - when ctx is done during a wait, an error matching ctx.Err() that also wraps the last
//     error, with no further attempt.
//
// Alongside an error, Execute returns the value the last attempt returned. Each attempt runs
// through a panic guard: a panic becomes a *levee.PanicError, classified like any other error
// (retried by default). A nil ctx means context.Background(); a nil call returns
// levee.ErrNilCall and a nil r returns ErrNilRetry, without panicking.
//
// Waits use a timer and end early when ctx is done; no wait follows the final attempt. With no
// event subscriber and no RetryOnResultPredicate, a call that succeeds allocates nothing, and
// call is not retained after Execute returns.
func Execute[T any](ctx context.Context, r *Retry, call func(context.Context) (T, error)) (T, error) {
	if r == nil {
		var zero T
		return zero, ErrNilRetry
	}
	if call == nil {
		var zero T
		return zero, safe.ErrNilCall
	}
	ctx = safe.Ctx(ctx)
	c := r.NewContext()
	for {
		v, err := safe.Call(ctx, call)
		var wait time.Duration
		var again bool
		if err != nil {
			if safe.CallerCancelled(ctx, err) {
				return v, err
			}
			wait, again = c.OnError(err)
		} else if r.config.RetryOnResultPredicate != nil {
			// Boxing v into an any allocates, so it only happens when a predicate will look.
			wait, again = c.OnResult(v)
		}
		if !again {
			if err == nil {
				c.OnSuccess()
			}
			return v, c.Err()
		}
		if !sleep(ctx, wait) {
			return v, newWaitCancelled(ctx, r.name, c.attempts, c.lastErr)
		}
	}
}

// sleep waits d and reports true, or reports false as soon as ctx is done (also when it is done
// already, so no attempt starts after a cancellation even with a zero wait).
func sleep(ctx context.Context, d time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
