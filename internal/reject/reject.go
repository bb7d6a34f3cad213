// Package reject marks the errors levee's own patterns return when they refuse a call
// (circuit breaker open, bulkhead full, rate limit exceeded). Retry does not retry such
// rejections and a circuit breaker does not count them unless the user lists them explicitly.
package reject

import "errors"

// Rejection is implemented by every levee rejection error.
type Rejection interface {
	error
	// LeveeRejection reports that levee refused the call before it ran.
	LeveeRejection() bool
}

// Is reports whether err, or any error in its chain, is a levee rejection.
func Is(err error) bool {
	// errors.AsType, unlike errors.As with a pointer to a local, does not move the target to
	// the heap: breakers and retries classify every failure with Is.
	r, ok := errors.AsType[Rejection](err)
	return ok && r.LeveeRejection()
}
