// Package levee brings the resilience patterns of Resilience4j — CircuitBreaker, Retry,
// Bulkhead, RateLimiter, TimeLimiter and Fallback — to Go, and composes them.
//
// Each pattern lives in its own package (circuitbreaker, retry, bulkhead, ratelimiter,
// timelimiter, fallback) as a non-generic, concurrency-safe object that one dependency's calls
// of any result type share. This package holds what they have in common and their composition:
// Call, the explicit builder Of(call).With...().Decorate() in Resilience4j's Decorators order
// (each With wraps everything before it, so the last one added is outermost), and the default
// pipeline in Resilience4j's annotation order
// Fallback(Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(call)))))).
package levee

import (
	"context"

	"github.com/levee-go/levee/internal/errmatch"
	"github.com/levee-go/levee/internal/reject"
	"github.com/levee-go/levee/internal/safe"
)

// Call is a guarded unit of work: one call to a dependency that honours ctx and returns a value
// of type T or an error. Every pattern's Decorate returns a function of this shape.
type Call[T any] func(ctx context.Context) (T, error)

// PanicError is the error a panic in a guarded call becomes. Patterns record it as a failure,
// release every permit the call held, and return it like any other error, so fallbacks and
// retry classification see it. Value is the value passed to panic and Stack the stack at the
// panic; when Value is an error, errors.Is and errors.As see through to it.
type PanicError = safe.PanicError

// ErrNilCall is returned, never panicked, when a nil function is given where a call is expected.
var ErrNilCall = safe.ErrNilCall

// ErrorType returns an entry for the error lists of the patterns' configs (RecordErrors,
// IgnoreErrors, RetryErrors, ...) that matches every error whose chain holds an error of type
// E, as errors.As does. Entries that are plain error values match as errors.Is.
//
//	IgnoreErrors: []error{ErrInvalidOrder, levee.ErrorType[*HTTPError]()}
func ErrorType[E error]() error { return errmatch.Type[E]() }

// IsRejection reports whether err is, or wraps, a rejection by one of levee's own patterns:
// circuitbreaker.ErrCallNotPermitted, bulkhead.ErrBulkheadFull or
// ratelimiter.ErrRequestNotPermitted. Such a call never reached the dependency.
func IsRejection(err error) bool { return reject.Is(err) }
