package leveegrpc

import (
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// PushbackKey is the trailer metadata key by which a server tells a client how long to wait
// before retrying, in milliseconds, as gRPC's retry design (A6): a non-negative integer is the
// wait, anything else asks the client not to retry.
const PushbackKey = "grpc-retry-pushback-ms"

// retryableCodes are the codes IsRetryable retries: those gRPC names for a server that is
// down or overloaded, the counterparts of HTTP's 503 and 429.
var retryableCodes = [...]codes.Code{codes.Unavailable, codes.ResourceExhausted}

// failureCodes are the codes IsFailure records: the server or the network failed, the
// counterparts of HTTP's 5xx and 429.
var failureCodes = [...]codes.Code{
	codes.Unknown, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Internal,
	codes.Unavailable, codes.DataLoss,
}

// IsRetryable reports whether a call that failed with err should be retried by default: its
// code is UNAVAILABLE or RESOURCE_EXHAUSTED, and the server did not ask, by pushback
// metadata that is negative or not a number, not to retry (gRPC's retry policy, A6). Every
// other code (INVALID_ARGUMENT, NOT_FOUND, DEADLINE_EXCEEDED, INTERNAL, ...) and nil are not.
// It is the RetryOnErrorPredicate RetryConfig installs.
//
// The code of an error, here and in IsFailure, RecordCodes and RetryCodes, is Code's.
func IsRetryable(err error) bool {
	if err == nil {
		return false
	}
	if d, ok := Pushback(err); ok && d < 0 {
		return false
	}
	c := Code(err)
	for _, r := range retryableCodes {
		if c == r {
			return true
		}
	}
	return false
}

// IsFailure reports whether err is a failure of the server or the network, to be recorded by
// a circuit breaker: UNKNOWN (also the code of an error that carries no status and is not
// levee's),
// DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, INTERNAL, UNAVAILABLE or DATA_LOSS, the counterparts
// of HTTP's 5xx and 429. The other codes (INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS,
// PERMISSION_DENIED, FAILED_PRECONDITION, ABORTED, OUT_OF_RANGE, UNIMPLEMENTED,
// UNAUTHENTICATED, CANCELLED) say the request was refused as asked, as a 4xx does: the
// breaker config of CircuitBreakerConfig ignores them. Nil is not a failure.
func IsFailure(err error) bool {
	if err == nil {
		return false
	}
	c := Code(err)
	for _, f := range failureCodes {
		if c == f {
			return true
		}
	}
	return false
}

// RecordCodes returns a predicate for circuitbreaker.Config's RecordErrorPredicate or
// IgnoreErrorPredicate that reports whether an error's code (see IsRetryable) is one of cs. The codes are copied. RecordCodes() matches nothing.
func RecordCodes(cs ...codes.Code) func(error) bool {
	set := codeSet(cs)
	return func(err error) bool { return err != nil && set.has(Code(err)) }
}

// RetryCodes returns a predicate for retry.Config's RetryOnErrorPredicate that reports
// whether an error's code (see IsRetryable) is one of cs, unless the server's pushback
// asked not to retry (see IsRetryable). The codes are copied. RetryCodes() matches nothing.
func RetryCodes(cs ...codes.Code) func(error) bool {
	set := codeSet(cs)
	return func(err error) bool {
		if err == nil || !set.has(Code(err)) {
			return false
		}
		d, ok := Pushback(err)
		return !ok || d >= 0
	}
}

// codes64 is a set of gRPC codes: a bit per code below 64, a slice for the rest.
type codes64 struct {
	bits  uint64
	large []codes.Code
}

func codeSet(cs []codes.Code) codes64 {
	var s codes64
	for _, c := range cs {
		if c < 64 {
			s.bits |= 1 << c
		} else {
			s.large = append(s.large, c)
		}
	}
	return s
}

func (s codes64) has(c codes.Code) bool {
	if c < 64 {
		return s.bits&(1<<c) != 0
	}
	for _, l := range s.large {
		if l == c {
			return true
		}
	}
	return false
}

// Pushback returns the server's pushback carried by err, an error returned by a call through
// UnaryClientInterceptor whose trailers held PushbackKey: found is false when there was none.
// A non-negative wait is the time the server asked the client to wait before the next
// attempt, to the millisecond; a wait of -1ns means the server asked not to retry (a negative
// or malformed value, as gRPC's retry policy reads it).
func Pushback(err error) (wait time.Duration, found bool) {
	var se *statusError
	if !errors.As(err, &se) || !se.hasPushback {
		return 0, false
	}
	return se.pushback, true
}

// parsePushback reads PushbackKey from md as gRPC's retry policy does: the first value, a
// non-negative decimal integer of milliseconds, or -1ns (do not retry) for anything else.
func parsePushback(md metadata.MD) (time.Duration, bool) {
	vs := md.Get(PushbackKey)
	if len(vs) == 0 {
		return 0, false
	}
	ms, err := strconv.ParseInt(vs[0], 10, 64)
	if err != nil || ms < 0 {
		return -1, true
	}
	if ms > math.MaxInt64/int64(time.Millisecond) {
		return time.Duration(math.MaxInt64), true
	}
	return time.Duration(ms) * time.Millisecond, true
}

// RetryConfig returns cfg set up for gRPC calls through UnaryClientInterceptor:
//
//   - when cfg sets neither RetryErrors nor RetryOnErrorPredicate, RetryOnErrorPredicate
//     becomes IsRetryable (UNAVAILABLE and RESOURCE_EXHAUSTED are retried, the other codes
//     never);
//   - the wait before a retry is the server's pushback when the failed attempt carried one
//     (exactly, as gRPC's retry policy), and cfg's own wait otherwise: cfg's
//     IntervalBiFunction or IntervalFunction, or its WaitDuration (0 meaning
//     retry.DefaultWaitDuration, retry.NoWait none), all turned into one IntervalBiFunction.
//
// A WaitDuration set together with an interval function, or a negative one other than
// retry.NoWait, is left as it is, for retry.New to refuse with its message. The other fields
// are kept as they are.
func RetryConfig(cfg retry.Config) retry.Config {
	if len(cfg.RetryErrors) == 0 && cfg.RetryOnErrorPredicate == nil {
		cfg.RetryOnErrorPredicate = IsRetryable
	}
	bi := cfg.IntervalBiFunction
	switch {
	case cfg.WaitDuration != 0 && (cfg.IntervalBiFunction != nil || cfg.IntervalFunction != nil):
		return cfg
	case cfg.WaitDuration < 0 && cfg.WaitDuration != retry.NoWait:
		return cfg
	case bi != nil && cfg.IntervalFunction != nil:
		return cfg
	case bi != nil:
	case cfg.IntervalFunction != nil:
		f := cfg.IntervalFunction
		bi = func(attempt int, _ error, _ any) time.Duration { return f(attempt) }
	default:
		w := cfg.WaitDuration
		switch w {
		case 0:
			w = retry.DefaultWaitDuration
		case retry.NoWait:
			w = 0
		}
		bi = func(int, error, any) time.Duration { return w }
	}
	cfg.WaitDuration, cfg.IntervalFunction = 0, nil
	cfg.IntervalBiFunction = PushbackInterval(bi)
	return cfg
}

// PushbackInterval returns a retry.IntervalBiFunction that waits the server's pushback when
// the failed attempt's error carries a non-negative one (see Pushback), and asks next
// otherwise. A pushback asking not to retry gives -1ns, which makes the retry stop (an
// EventError) should its predicate have chosen to retry anyway. A nil next means no wait.
func PushbackInterval(next retry.IntervalBiFunction) retry.IntervalBiFunction {
	return func(attempt int, err error, result any) time.Duration {
		if d, ok := Pushback(err); ok {
			return d
		}
		if next == nil {
			return 0
		}
		return next(attempt, err, result)
	}
}

// CircuitBreakerConfig returns cfg set up for gRPC calls: when cfg sets neither RecordErrors
// nor RecordErrorPredicate, RecordErrorPredicate becomes IsFailure, and when it sets neither
// IgnoreErrors nor IgnoreErrorPredicate, IgnoreErrorPredicate ignores every error IsFailure
// does not record (INVALID_ARGUMENT, NOT_FOUND, ...: neither a success nor a failure, as a
// 4xx). The other fields are kept as they are. A breaker built from it in a stream client's
// interceptor records the stream's final status the same way.
func CircuitBreakerConfig(cfg circuitbreaker.Config) circuitbreaker.Config {
	if len(cfg.RecordErrors) == 0 && cfg.RecordErrorPredicate == nil {
		cfg.RecordErrorPredicate = IsFailure
	}
	if len(cfg.IgnoreErrors) == 0 && cfg.IgnoreErrorPredicate == nil {
		cfg.IgnoreErrorPredicate = isNotFailure
	}
	return cfg
}

func isNotFailure(err error) bool { return !IsFailure(err) }

// Code returns the gRPC code of err that IsRetryable, IsFailure, RecordCodes and RetryCodes
// classify, and that the client interceptors give the caller: codes.OK for nil,
// DEADLINE_EXCEEDED for a levee time limiter's timeout (which, depending on whether the
// attempt's own DEADLINE_EXCEEDED had arrived when the limiter woke, may carry no status),
// else the status status.Code finds through wrappers, else the code levee's error is mapped to
// (an open breaker UNAVAILABLE, a full bulkhead or refused rate limit RESOURCE_EXHAUSTED, a
// panic INTERNAL, a context error its own code), else UNKNOWN.
func Code(err error) codes.Code {
	switch {
	case err == nil:
		return codes.OK
	case errors.Is(err, timelimiter.ErrTimeout):
		return codes.DeadlineExceeded
	case hasStatus(err):
		return status.Code(err)
	}
	return levelCode(err)
}
