package retry

import (
	"context"
	"time"

	"github.com/levee-go/levee/internal/callobs"
	"github.com/levee-go/levee/internal/safe"
)

// Execute runs call under r, retrying it as r's Config says, as Resilience4j's
// Retry.executeCallable. Each attempt is classified: a value is accepted unless
// RetryOnResultPredicate matches it; an error that is a levee rejection is retried only when
// RetryRejections lists it; any other error is retried when RetryErrors or
// RetryOnErrorPredicate matches it (every error when both are unset) and IgnoreErrors does not.
// Before each retry Execute waits the interval the Config gives; no wait follows the last
// attempt.
//
// How a call ends is one rule, which a Context driven by hand follows too. Execute returns the
// value of the last attempt made, and as its error:
//
//   - nil, when that attempt's value is accepted (a success, after retries or not);
//   - the attempt's error itself, unchanged, when it is not retried: an error IgnoreErrors or
//     the classification above leaves alone, or a rejection RetryRejections does not list —
//     even after earlier retries; an error marked by Permanent ends the call at once too,
//     without the mark (see Permanent);
//   - the caller's cancellation itself (ctx.Err(), unchanged), without any attempt, when ctx
//     is already done as Execute is called: no call is made and no outcome is counted, as a
//     pipeline's other patterns refuse to start a call for a caller who has given up;
//   - the caller's cancellation itself, unchanged, when an attempt returns an error matching
//     ctx.Err() once ctx is done: it is not retried and counted in no outcome;
//   - when ctx is done during a wait (or before a retry with no wait), an error that matches
//     ctx.Err() and context.Cause(ctx) with errors.Is and also wraps the last attempt's error,
//     so neither is lost; no further attempt runs and no outcome is counted;
//   - a *MaxRetriesExceededError wrapping the last error when the last attempt failed with a
//     retried error and retrying stopped, because the attempts ran out, the interval function
//     returned a negative wait, the next wait would end after MaxDuration (Reason
//     ErrMaxDurationExceeded) or the Budget refused the retry (Reason ErrBudgetExhausted):
//     errors.Is finds ErrMaxRetriesExceeded, the Reason if any, and the call's own error;
//   - nil, when the last attempt's result still matched RetryOnResultPredicate and retrying
//     stopped (for any of the reasons above): the caller gets that result as it is.
//     With FailAfterMaxAttempts the error is instead a *MaxRetriesExceededError carrying the
//     result in LastResult;
//   - a *levee.PanicError when a config hook (a predicate, an interval function,
//     ConsumeResultBeforeRetryAttempt) panics, wrapping the attempt's error if there was one.
//
// Unless Config.IgnoreCallerDeadline is set, a retry is not made when its wait, plus
// Config.MinAttemptDuration, would reach ctx's deadline: the call ends at once with a
// *MaxRetriesExceededError whose Reason is ErrCallerDeadline, wrapping the last attempt's own
// error (or, on a result, as FailAfterMaxAttempts says), instead of sleeping into the deadline
// and returning context.DeadlineExceeded. A deadline already passed counts, even an instant
// before ctx.Err() is set.
//
// A panic in call itself becomes a *levee.PanicError and is classified like any other error
// (retried by default). A nil ctx means context.Background(); a nil call returns
// levee.ErrNilCall and a nil r returns ErrNilRetry, without panicking.
//
// With no event subscriber and no RetryOnResultPredicate, a call that succeeds allocates
// nothing, nor does one that ends at once on an error that is not retried; call is not
// retained after Execute returns.
func Execute[T any](ctx context.Context, r *Retry, call func(context.Context) (T, error)) (T, error) {
	return ExecuteExpecting(ctx, r, 0, call)
}

// ExecuteExpecting is Execute for a call whose every attempt is expected to take up to
// attempt: a retry is made only when at least max(attempt, Config.MinAttemptDuration) of the
// caller's deadline is left once its wait is over (see Config.IgnoreCallerDeadline). A
// pipeline (levee.Pipeline, levee.DefaultPipeline) calls it with the TimeoutDuration of the
// TimeLimiter inside the retry, so that no retry starts an attempt its time limit says cannot
// finish before the caller's deadline. A zero or negative attempt is Execute.
func ExecuteExpecting[T any](ctx context.Context, r *Retry, attempt time.Duration, call func(context.Context) (T, error)) (T, error) {
	if r.unset() {
		var zero T
		return zero, ErrNilRetry
	}
	if call == nil {
		var zero T
		return zero, safe.ErrNilCall
	}
	ctx = safe.Ctx(ctx)
	if err := ctx.Err(); err != nil {
		// A call whose caller has already given up makes no attempt, as a pipeline's breaker,
		// bulkhead and limiter refuse to start one: the caller's cancellation is returned
		// unchanged and no outcome is counted.
		var zero T
		return zero, err
	}
	c := r.NewContext()
	c.ctx = ctx
	c.expect = attempt
	obs := callobs.From(ctx) // once per call; nil (nothing more done) without an observer
	for {
		v, err := safe.Call(ctx, call)
		if obs != nil {
			obs.OnCallEvent(ctx, callobs.Event{Kind: callobs.Attempt, Pattern: "retry", Name: r.name, Attempt: c.attempts + 1, Err: err})
		}
		var wait time.Duration
		var again bool
		if err != nil {
			if safe.CallerCancelled(ctx, err) {
				return v, err
			}
			wait, again = c.OnError(err)
		} else if c.s.config.RetryOnResultPredicate != nil {
			// Boxing v into an any allocates, so it only happens when a predicate will look.
			wait, again = c.OnResult(v)
		}
		if !again {
			if err == nil {
				c.OnSuccess()
			}
			return v, c.Err()
		}
		if obs != nil && wait > 0 {
			obs.OnCallEvent(ctx, callobs.Event{Kind: callobs.Wait, Pattern: "retry", Name: r.name, Attempt: c.attempts + 1, Wait: wait})
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
