package ratelimiter

import (
	"errors"
	"fmt"
)

// rejection is the type of ErrRequestNotPermitted, so that the sentinel itself, and anything
// wrapping it, is recognised as a levee rejection.
type rejection string

func (r rejection) Error() string { return string(r) }

// LeveeRejection marks the sentinel as a levee rejection.
func (rejection) LeveeRejection() bool { return true }

// ErrRequestNotPermitted is matched, with errors.Is, by every refusal of a rate limiter: the
// permissions asked for were not free and the wait for reserved ones would not fit in
// TimeoutDuration. The error returned is a *RequestNotPermittedError naming the limiter.
var ErrRequestNotPermitted error = rejection("ratelimiter: request not permitted")

// RequestNotPermittedError is the error a rate limiter refuses a request with, as Resilience4j's
// RequestNotPermitted. It matches ErrRequestNotPermitted with errors.Is and is a levee rejection
// (levee.IsRejection), which retry does not retry and a circuit breaker does not record unless
// configured to. Each limiter returns one preallocated value for all its refusals, so that
// refusing allocates nothing: treat it as read-only.
type RequestNotPermittedError struct {
	// Name is the name of the limiter that refused.
	Name string
}

// Error returns "ratelimiter: RateLimiter '<name>' does not permit further calls".
func (e *RequestNotPermittedError) Error() string {
	return "ratelimiter: RateLimiter '" + e.Name + "' does not permit further calls"
}

// Is reports whether target is ErrRequestNotPermitted.
func (e *RequestNotPermittedError) Is(target error) bool { return target == ErrRequestNotPermitted }

// LeveeRejection marks the error as a refusal by levee, before the call ran.
func (e *RequestNotPermittedError) LeveeRejection() bool { return true }

// ErrInvalidPermits is matched by the error returned when the number of permissions asked for is
// below 1 or above LimitForPeriod. Such a request is a programming error, not a rejection:
// it could never be granted.
var ErrInvalidPermits = errors.New("ratelimiter: invalid number of permits")

// ErrNilRateLimiter is returned, instead of a panic, when a method or helper is given a nil
// *RateLimiter.
var ErrNilRateLimiter = errors.New("ratelimiter: nil or zero *RateLimiter (create one with ratelimiter.New)")

func invalidPermits(p, limit int64) error {
	return fmt.Errorf("%w: asked for %d, must be in [1, %d] (LimitForPeriod)", ErrInvalidPermits, p, limit)
}
