package retry

import (
	"context"
	"errors"
	"fmt"
)

// ErrMaxRetriesExceeded matches (errors.Is) every *MaxRetriesExceededError: the call used all
// its attempts and still failed, or (with FailAfterMaxAttempts) its result still matched
// RetryOnResultPredicate when retrying stopped.
var ErrMaxRetriesExceeded = errors.New("retry: max retries exceeded")

// ErrNilRetry is returned by Execute when the *Retry is nil.
var ErrNilRetry = errors.New("retry: nil *Retry")

// MaxRetriesExceededError is the error of a call that ran out of attempts, as Resilience4j's
// MaxRetriesExceededException. It is returned
//
//   - when the last attempt failed with a retryable error: LastErr is that error, and Unwrap
//     returns it so errors.Is and errors.As find the call's own error;
//   - with FailAfterMaxAttempts, when the last result still matched RetryOnResultPredicate and
//     no attempt was left (or the interval function returned a negative interval): LastResult
//     is that result and LastErr the last error of an earlier attempt, if any.
//
// Attempts is the number of attempts made. errors.Is(err, ErrMaxRetriesExceeded) is true. It is
// not a levee rejection: the call did run, so an outer circuit breaker records it as a failure.
type MaxRetriesExceededError struct {
	Name       string
	Attempts   int
	LastResult any
	LastErr    error
}

// Error reads "retry: Retry '<name>' has exhausted all attempts (<attempts>)", followed by
// ": <last error>" when there is one.
func (e *MaxRetriesExceededError) Error() string {
	msg := fmt.Sprintf("retry: Retry '%s' has exhausted all attempts (%d)", e.Name, e.Attempts)
	if e.LastErr != nil {
		msg += ": " + e.LastErr.Error()
	}
	return msg
}

// Is reports whether target is ErrMaxRetriesExceeded.
func (e *MaxRetriesExceededError) Is(target error) bool { return target == ErrMaxRetriesExceeded }

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
