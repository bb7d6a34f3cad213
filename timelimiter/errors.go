package timelimiter

import (
	"context"
	"errors"
	"time"
)

// ErrTimeout is the sentinel every timeout of a time limiter matches with errors.Is, as
// Resilience4j's TimeoutException. It matches context.DeadlineExceeded too, so code that
// already checks for deadlines treats a timeout as one.
var ErrTimeout error = &timeoutSentinel{}

// ErrNilTimeLimiter is returned by Execute when the time limiter is nil. The methods of a nil
// *TimeLimiter do nothing and return zero values.
var ErrNilTimeLimiter = errors.New("timelimiter: nil or zero *TimeLimiter (create one with timelimiter.New)")

// TimeoutError is the error Execute returns when the call did not return within the timeout.
// It matches ErrTimeout and context.DeadlineExceeded with errors.Is. It is not a levee
// rejection: the call did start, so retry and circuit breakers treat it as a failure.
type TimeoutError struct {
	// Name is the time limiter's name.
	Name string
	// Timeout is the TimeoutDuration that expired.
	Timeout time.Duration
	// Err is the call's own error when the call returned at its deadline with an error
	// matching context.DeadlineExceeded (it honoured the attempt's context); nil when the
	// caller stopped waiting before the call returned. Unwrap returns it.
	Err error
}

// Error returns "timelimiter: TimeLimiter '<name>' recorded a timeout exception".
func (e *TimeoutError) Error() string {
	return "timelimiter: TimeLimiter '" + e.Name + "' recorded a timeout exception"
}

// Is reports whether target is ErrTimeout or context.DeadlineExceeded.
func (e *TimeoutError) Is(target error) bool {
	return target == ErrTimeout || target == context.DeadlineExceeded
}

// Unwrap returns the call's own error, if any (see Err).
func (e *TimeoutError) Unwrap() error { return e.Err }

type timeoutSentinel struct{ _ int }

func (*timeoutSentinel) Error() string        { return "timelimiter: timeout" }
func (*timeoutSentinel) Is(target error) bool { return target == context.DeadlineExceeded }
func (*timeoutSentinel) Timeout() bool        { return true } // as context.DeadlineExceeded
func (*timeoutSentinel) Temporary() bool      { return true } // as context.DeadlineExceeded
