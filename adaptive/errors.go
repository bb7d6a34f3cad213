package adaptive

import "errors"

// ErrLimitExceeded is the sentinel every rejection by a Limiter matches with errors.Is, as
// Netflix's concurrency-limits' LimitExceededException. levee.IsRejection reports true for
// it: the call never reached the dependency, so by default a circuit breaker does not count
// it and Retry does not retry it.
var ErrLimitExceeded error = &rejection{"adaptive: concurrency limit exceeded"}

// ErrNilLimiter is returned, instead of a panic, by Execute and Acquire when the limiter is
// nil. The other methods of a nil *Limiter do nothing and return zero values.
var ErrNilLimiter = errors.New("adaptive: nil or zero *Limiter (create one with adaptive.New)")

// LimitExceededError is the error Acquire and Execute return when no permit came: the limit
// was reached and the queue was full, or the wait ended. Name is the limiter's name. It
// matches ErrLimitExceeded with errors.Is.
type LimitExceededError struct {
	Name string
}

// Error returns "adaptive: Limiter '<name>' has reached its concurrency limit and does not
// permit further calls".
func (e *LimitExceededError) Error() string {
	return "adaptive: Limiter '" + e.Name + "' has reached its concurrency limit and does not permit further calls"
}

// Is reports whether target is ErrLimitExceeded.
func (e *LimitExceededError) Is(target error) bool { return target == ErrLimitExceeded }

// LeveeRejection marks the error as a levee rejection (see levee.IsRejection).
func (e *LimitExceededError) LeveeRejection() bool { return true }

// rejection is the type of the sentinel, so that the sentinel itself is a levee rejection.
type rejection struct{ msg string }

func (r *rejection) Error() string        { return r.msg }
func (r *rejection) LeveeRejection() bool { return true }
