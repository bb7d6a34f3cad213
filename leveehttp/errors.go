package leveehttp

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// ErrNotRetryable is matched (errors.Is) by the error of an attempt the Transport will not send
// again: a client error (a status the Config's Failure does not call a failure, 400 to 499 but
// 429 by default), a failure of a request that cannot be replayed (a body without GetBody, a
// non-idempotent method without an idempotency key), or a Retry-After longer than the caller's
// deadline allows. RetryConfig lists it in retry.Config.IgnoreErrors, so such an attempt is the
// last one.
var ErrNotRetryable = errors.New("leveehttp: request not retryable")

// ErrNotReplayable is matched (errors.Is) by every *NotReplayableError: the error of a request
// whose attempt failed without a response and that the Transport did not send again because it
// cannot be. It is not ErrNotRetryable's sentinel, which client errors (4xx) match too, so a
// caller can tell the two apart; a *NotReplayableError matches both.
var ErrNotReplayable = errors.New("leveehttp: request not retried: it cannot be sent again")

// NotReplayableError is the error of a request whose attempt failed with a transport error (a
// connection reset, say) and that was not sent again because it cannot be: its body has no
// GetBody to replay it, or its method is not idempotent and it carries no idempotency key. It
// matches ErrNotReplayable and ErrNotRetryable (so RetryConfig's retry makes no further
// attempt), and wraps the transport error (errors.Is(err, io.EOF) still holds).
type NotReplayableError struct {
	// Method and URL (redacted of its password) are the request's.
	Method, URL string
	// Reason says why the request cannot be sent again.
	Reason string
	// Err is the transport error of the attempt.
	Err error
}

// Error returns e.g. "leveehttp: POST http://pay.test/charge not retried: its body cannot be
// sent again (the request has no GetBody): EOF".
func (e *NotReplayableError) Error() string {
	msg := fmt.Sprintf("leveehttp: %s %s not retried: %s", e.Method, e.URL, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns Err.
func (e *NotReplayableError) Unwrap() error { return e.Err }

// Is reports whether target is ErrNotReplayable or ErrNotRetryable.
func (e *NotReplayableError) Is(target error) bool {
	return target == ErrNotReplayable || target == ErrNotRetryable
}

// ErrNotSent is matched (errors.Is) by the error of an attempt the Transport refused to send
// because an earlier attempt of the same request ended with an error matching ErrNotRetryable
// and the pipeline retried it anyway (its retry.Config was not made by RetryConfig). It is a
// levee rejection (levee.IsRejection): nothing reached the server, so a breaker does not record
// it and a retry does not retry it unless told to. The Transport never returns it to its
// caller: it returns the outcome of the last attempt sent instead.
var ErrNotSent error = &notSentError{}

// notSentError is ErrNotSent, and the error of each refused attempt (wrapping the outcome of the
// last attempt sent, so that fallbacks on *StatusError still see it).
type notSentError struct{ last error }

func (e *notSentError) Error() string {
	if e.last == nil {
		return "leveehttp: request not sent again"
	}
	return "leveehttp: request not sent again after: " + e.last.Error()
}
func (e *notSentError) Unwrap() error        { return e.last }
func (e *notSentError) Is(target error) bool { return target == ErrNotSent }
func (*notSentError) LeveeRejection() bool   { return true }

// notRetryable marks an attempt's error with ErrNotRetryable, keeping the error itself in the
// chain for errors.As.
type notRetryable struct{ err error }

func (e *notRetryable) Error() string        { return e.err.Error() }
func (e *notRetryable) Unwrap() error        { return e.err }
func (e *notRetryable) Is(target error) bool { return target == ErrNotRetryable }

// StatusError is the error of an attempt answered with a status the Transport does not pass on
// as a success: a failure (5xx and 429 by default, see Config.Failure) or a client error (any
// other status >= 400). Inside the pipeline it is what breakers, retries and fallbacks see;
// the Transport's caller gets Response itself, never the error.
//
// Response's body has already been read, at most Config.MaxBodyBuffer bytes of it (the rest,
// if any, is discarded with the connection), and closed: Response.Body replays those bytes and
// needs no Close, so a failed attempt holds no connection whatever the pipeline does with it.
type StatusError struct {
	// Response is the attempt's response, its body buffered as described above.
	Response *http.Response
	// StatusCode is Response.StatusCode.
	StatusCode int
	// Failure is Config.Failure's verdict: true for a failure of the server, false for a
	// client error, which CircuitBreakerConfig makes the breaker ignore.
	Failure bool
	// RetryAfter is the wait the server asked for with Retry-After on a 429 or 503 (seconds or
	// an HTTP date), as sent; 0 when there is none or it is not in the future.
	RetryAfter time.Duration
	// RetryAt is the instant before which the Transport sends no further attempt of this
	// request: received + min(RetryAfter, Config.MaxRetryAfter). Zero without RetryAfter.
	RetryAt time.Time
}

// Error returns e.g. "leveehttp: GET http://pricing/quote: 503 Service Unavailable".
func (e *StatusError) Error() string {
	if e.Response != nil && e.Response.Request != nil && e.Response.Request.URL != nil {
		return fmt.Sprintf("leveehttp: %s %s: %s", e.Response.Request.Method,
			e.Response.Request.URL.Redacted(), statusText(e.StatusCode))
	}
	return "leveehttp: " + statusText(e.StatusCode)
}

func statusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return fmt.Sprintf("%d %s", code, t)
	}
	return fmt.Sprintf("%d", code)
}

// ErrRetryAfter is matched (errors.Is) by every *RetryAfterError.
var ErrRetryAfter = errors.New("leveehttp: Retry-After exceeds the time left")

// RetryAfterError is the error the Transport returns at once when a server's Retry-After
// (capped at Config.MaxRetryAfter) would make the next attempt start after the caller's
// deadline (the request context's): waiting would only end in a timeout. It matches
// ErrRetryAfter and ErrNotRetryable with errors.Is, and wraps the *StatusError of the response
// that asked (errors.As finds it, with its buffered Response).
type RetryAfterError struct {
	// RetryAfter is the wait the next attempt needed: the server's Retry-After capped at
	// Config.MaxRetryAfter.
	RetryAfter time.Duration
	// Remaining is the time that was left before the caller's deadline.
	Remaining time.Duration
	// Err is the *StatusError of the response carrying Retry-After.
	Err *StatusError
}

// Error returns e.g. "leveehttp: Retry-After 30s exceeds the 2s left before the deadline
// (503 Service Unavailable)".
func (e *RetryAfterError) Error() string {
	code := 0
	if e.Err != nil {
		code = e.Err.StatusCode
	}
	return fmt.Sprintf("leveehttp: Retry-After %v exceeds the %v left before the deadline (%s)",
		e.RetryAfter, e.Remaining, statusText(code))
}

// Is reports whether target is ErrRetryAfter or ErrNotRetryable.
func (e *RetryAfterError) Is(target error) bool {
	return target == ErrRetryAfter || target == ErrNotRetryable
}

// Unwrap returns the *StatusError.
func (e *RetryAfterError) Unwrap() error {
	if e.Err == nil {
		return nil
	}
	return e.Err
}
