// Package levee guards calls to a dependency — a function taking a context.Context and
// returning a value and an error — with resilience patterns, and composes them.
//
// Each pattern lives in its own package as a concurrency-safe object built once per dependency
// with New(name, Config) and shared by all its calls, whatever their result type:
// circuitbreaker, retry, bulkhead, ratelimiter and timelimiter; fallback answers failures with
// a value of the call's type. Each package's Execute runs one call through one pattern. This
// package composes them:
//
//   - Compose[T]().With...() builds a *Pipeline[T] in the order written: each With... wraps
//     everything added before it, so the last one added is the outermost layer.
//   - DefaultPipeline[T](Patterns, fallback) builds the usual order,
//     Fallback(Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(call)))))).
//
// A Pipeline is immutable and safe for concurrent use; Pipeline.Execute runs a call through it
// and Pipeline.ExecuteOutcome also tells whether a fallback answered. NewPatterns builds every
// pattern of a dependency from their configs with one error to check, and Must shortens the
// set-up of configs known at start-up.
//
// A panic in a guarded call becomes a *PanicError, a nil call ErrNilCall: levee never panics on
// its callers' behalf. A call refused by a pattern (an open breaker, a full bulkhead, a rate
// limit) fails with an error IsRejection recognises, and never reached the dependency. The
// caller's own cancellation is nobody's failure: it is neither retried, recorded nor answered
// by a fallback.
//
// The stream, operators (rxgo) and async packages apply the same pipelines to each element of a
// channel, each item of an Observable and each future.
//
// # Differences from Resilience4j
//
// The patterns follow Resilience4j's semantics, names and defaults; each package lists its own
// differences. For composition:
//
//   - Compose is Resilience4j's Decorators, with one builder for every call of a result type
//     instead of one per call.
//   - DefaultPipeline is the annotations' aspect order, but its fallback is always outermost:
//     Resilience4j runs an annotation's fallbackMethod around that annotation's aspect alone,
//     so a fallback on @CircuitBreaker sits inside the retry. Compose writes that order
//     explicitly when it is wanted.
//   - A rejection by one of levee's own patterns is not a failure of the dependency: a breaker
//     records it and a retry retries it only when listed in circuitbreaker.Config's
//     RecordRejections or retry.Config's RetryRejections, never through the other error
//     lists or a predicate. Resilience4j records a BulkheadFullException and retries a
//     CallNotPermittedException like any other exception.
package levee

import (
	"context"

	"github.com/levee-go/levee/internal/errmatch"
	"github.com/levee-go/levee/internal/reject"
	"github.com/levee-go/levee/internal/safe"
)

// Call is a guarded unit of work: one call to a dependency that honours ctx and returns a value
// of type T or an error. Pipeline.Execute and every pattern's Execute take a function of this
// shape.
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
// circuitbreaker.ErrCallNotPermitted, bulkhead.ErrBulkheadFull, ratelimiter.ErrRequestNotPermitted,
// adaptive.ErrLimitExceeded or an async worker pool's *async.WorkerPoolFullError. Such a call never reached the dependency.
// A *PanicError never is one, whatever value the call panicked with: the call ran, and its panic
// is recorded as a failure like any other. Each of those errors has a method
// LeveeRejection() bool that returns true, which is what IsRejection looks for: an error of
// yours with that method counts as a rejection too.
func IsRejection(err error) bool { return reject.Is(err) }

// AllRejections returns the list that opts in every rejection IsRejection recognises, for the
// fields named for rejections: retry.Config.RetryRejections and
// circuitbreaker.Config.RecordRejections. It is the one way to say "every rejection", and
// Resilience4j's default: its Retry retries CallNotPermittedException, BulkheadFullException
// and RequestNotPermitted like any exception, and its CircuitBreaker records them.
//
//	RetryRejections:  levee.AllRejections(),
//	RecordRejections: levee.AllRejections(),
//
// Each call returns a fresh slice of one entry, so appending to it or changing it never affects
// another config. To opt in only some rejections, list their sentinels instead:
// []error{bulkhead.ErrBulkheadFull}.
func AllRejections() []error { return []error{errmatch.AnyRejection()} }

// AnyRejection returns the single list entry that matches every rejection IsRejection
// recognises; AllRejections returns the whole list.
//
// Deprecated: use AllRejections, which is the list itself: RetryRejections:
// levee.AllRejections() instead of []error{levee.AnyRejection()}.
func AnyRejection() error { return errmatch.AnyRejection() }
