package retry

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrMaxRetriesExceeded matches (errors.Is) every *MaxRetriesExceededError.
var ErrMaxRetriesExceeded = errors.New("retry: max retries exceeded")

// ErrMaxDurationExceeded is the Reason of a *MaxRetriesExceededError whose call stopped because
// its next wait would have ended after Config.MaxDuration, as cenkalti/backoff's MaxElapsedTime
// and failsafe-go's WithMaxDuration.
var ErrMaxDurationExceeded = errors.New("retry: max duration exceeded")

// ErrBudgetExhausted is the Reason of a *MaxRetriesExceededError whose call stopped because
// Config.Budget had no retry left to give, as gRPC's retry throttling and Finagle's RetryBudget.
var ErrBudgetExhausted = errors.New("retry: retry budget exhausted")

// ErrCallerDeadline is the Reason of a *MaxRetriesExceededError whose call stopped because the
// next attempt could not have finished before the caller's deadline: its wait, plus
// Config.MinAttemptDuration, would have reached the deadline of the call's context (see
// Config.IgnoreCallerDeadline).
var ErrCallerDeadline = errors.New("retry: the next attempt could not finish before the caller's deadline")

// ErrServingRetry is the Reason of a *MaxRetriesExceededError whose call made one attempt only
// because the caller of the request it serves retries that request itself, so that retries
// happen at one layer only, the outermost (see Config.NoRetryOfRetries and CallerRetries).
var ErrServingRetry = errors.New("retry: the caller of the request served retries it itself")

// ErrNilRetry is returned by Execute when the *Retry is nil.
var ErrNilRetry = errors.New("retry: nil or zero *Retry (create one with retry.New)")

// MaxRetriesExceededError is the error of a call that stopped retrying while its last outcome
// was still one to retry, as Resilience4j's MaxRetriesExceededException: its attempts ran out
// (Attempts == MaxAttempts), the interval function returned a negative wait
// (Attempts < MaxAttempts), the next wait would have ended after Config.MaxDuration (Reason
// ErrMaxDurationExceeded) or Config.Budget refused the retry (Reason ErrBudgetExhausted).
// Execute returns it
//
//   - when the last attempt failed with an error that is retried: LastErr is that error, and
//     Unwrap returns it, so errors.Is and errors.As find the call's own error;
//   - with FailAfterMaxAttempts, when the last attempt returned a result that
//     RetryOnResultPredicate still matched: LastResult is that result and LastErr the error of
//     an earlier attempt, if any.
//
// errors.Is(err, ErrMaxRetriesExceeded) is true, and so is errors.Is(err, Reason) when Reason is
// set, so a caller can tell a call stopped by the budget from one that ran out of attempts
// without looking inside. The call did run, so it is not a levee
// rejection, unless its last error was one (retried because RetryRejections listed it).
type MaxRetriesExceededError struct {
	Name        string // the Retry's name
	Attempts    int    // attempts made
	MaxAttempts int    // the Config's MaxAttempts
	LastResult  any
	LastErr     error

	// Reason is nil when the attempts ran out or the interval function stopped retrying;
	// ErrMaxDurationExceeded or ErrBudgetExhausted when that stopped the call.
	Reason error
}

// Error reads "retry: Retry '<name>' has exhausted all attempts (<attempts>)" or, when the
// interval function stopped it early, "retry: Retry '<name>' stopped after <attempts> of
// <max> attempts", or with a Reason "retry: Retry '<name>' stopped after <attempts> of <max>
// attempts (retry budget exhausted)", followed by ": <last error>" when there is one.
func (e *MaxRetriesExceededError) Error() string {
	var msg string
	if e.Reason != nil {
		msg = fmt.Sprintf("retry: Retry '%s' stopped after %d of %d attempts (%s)", e.Name, e.Attempts, e.MaxAttempts,
			strings.TrimPrefix(e.Reason.Error(), "retry: "))
	} else if e.Attempts < e.MaxAttempts {
		msg = fmt.Sprintf("retry: Retry '%s' stopped after %d of %d attempts", e.Name, e.Attempts, e.MaxAttempts)
	} else {
		msg = fmt.Sprintf("retry: Retry '%s' has exhausted all attempts (%d)", e.Name, e.Attempts)
	}
	if e.LastErr != nil {
		msg += ": " + e.LastErr.Error()
	}
	return msg
}

// Is reports whether target is ErrMaxRetriesExceeded, or the Reason when there is one.
func (e *MaxRetriesExceededError) Is(target error) bool {
	return target == ErrMaxRetriesExceeded || (e.Reason != nil && target == e.Reason)
}

// Unwrap returns LastErr.
func (e *MaxRetriesExceededError) Unwrap() error { return e.LastErr }

// waitCancelledError ends a call whose context was cancelled while it waited for a retry. It
// matches ctx.Err() (and the context's cause) and the last error, so neither is lost.
type waitCancelledError struct {
	name     string
	attempts int
	ctxErr   error // ctx.Err()
	cause    error // context.Cause(ctx) when it differs from ctxErr, else nil
	lastErr  error // error of the last attempt; nil when a result caused the retry
}

func newWaitCancelled(ctx context.Context, name string, attempts int, lastErr error) error {
	e := &waitCancelledError{name: name, attempts: attempts, ctxErr: ctx.Err(), lastErr: lastErr}
	if cause := context.Cause(ctx); cause != nil && cause != e.ctxErr {
		e.cause = cause
	}
	return e
}

func (e *waitCancelledError) Error() string {
	msg := fmt.Sprintf("retry: Retry '%s' stopped waiting for attempt %d: %v", e.name, e.attempts+1, e.ctxErr)
	if e.cause != nil {
		msg += " (" + e.cause.Error() + ")"
	}
	if e.lastErr != nil {
		msg += "; last error: " + e.lastErr.Error()
	}
	return msg
}

func (e *waitCancelledError) Unwrap() []error {
	errs := []error{e.ctxErr}
	if e.cause != nil {
		errs = append(errs, e.cause)
	}
	if e.lastErr != nil {
		errs = append(errs, e.lastErr)
	}
	return errs
}
