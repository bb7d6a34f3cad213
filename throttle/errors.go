package throttle

import "errors"

// ErrThrottled is the sentinel every local refusal by a Throttler matches with errors.Is.
// levee.IsRejection reports true for it: the call never reached the backend, so by default a
// circuit breaker does not count it, Retry does not retry it, and an outer Throttler does not
// count it as the backend's rejection.
var ErrThrottled error = &rejection{"throttle: request throttled on the client side"}

// ErrNilThrottler is returned, instead of a panic, by Execute and Acquire when the throttler
// is nil. The other methods of a nil *Throttler do nothing and return zero values.
var ErrNilThrottler = errors.New("throttle: nil or zero *Throttler (create one with throttle.New)")

// ThrottledError is the error Acquire and Execute return for a local refusal. Name is the
// throttler's name. It matches ErrThrottled with errors.Is. Every refusal by one throttler
// returns the same value: treat it as read-only.
type ThrottledError struct {
	Name string
}

// Error returns "throttle: Throttler '<name>' rejected the request on the client side".
func (e *ThrottledError) Error() string {
	return "throttle: Throttler '" + e.Name + "' rejected the request on the client side"
}

// Is reports whether target is ErrThrottled.
func (e *ThrottledError) Is(target error) bool { return target == ErrThrottled }

// LeveeRejection marks the error as a levee rejection (see levee.IsRejection).
func (e *ThrottledError) LeveeRejection() bool { return true }

type rejection struct{ msg string }

func (r *rejection) Error() string        { return r.msg }
func (r *rejection) LeveeRejection() bool { return true }
