package leveegrpc

import (
	"context"
	"errors"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/timelimiter"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// statusError is an error with a gRPC status (status.Code and status.FromError see it through
// any wrapper) that keeps the error it stands for in its chain: a levee error mapped to a
// status, or an attempt's status error together with the server's pushback and the caller's
// context error.
type statusError struct {
	st  *status.Status
	err error // the error the status stands for; Unwrap returns it
	ctx error // the caller's context error when the call ended with it; Unwrap returns it too

	pushback    time.Duration
	hasPushback bool
}

// Error returns the wrapped error's message.
func (e *statusError) Error() string { return e.err.Error() }

// GRPCStatus returns the status, as status.FromError expects.
func (e *statusError) GRPCStatus() *status.Status { return e.st }

// Unwrap returns the error the status stands for and, when the call ended with its caller's
// cancellation or deadline, the context's error.
func (e *statusError) Unwrap() []error {
	if e.ctx == nil {
		return []error{e.err}
	}
	return []error{e.err, e.ctx}
}

// withStatus returns err with the status code, keeping err in the chain.
func withStatus(c codes.Code, err error) error {
	return &statusError{st: status.New(c, err.Error()), err: err}
}

// hasStatus reports whether err carries a gRPC status of its own.
func hasStatus(err error) bool {
	var gs interface{ GRPCStatus() *status.Status }
	return errors.As(err, &gs) && gs.GRPCStatus() != nil
}

// clientError maps the error a client interceptor's pipeline returned to the error the caller
// of the gRPC stub receives: one with a gRPC status that keeps err in its chain.
func clientError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
		if hasStatus(err) && (status.Code(err) == codes.Canceled || status.Code(err) == codes.DeadlineExceeded) {
			return err
		}
		return withStatus(status.FromContextError(cerr).Code(), err)
	}
	if errors.Is(err, timelimiter.ErrTimeout) {
		return withStatus(codes.DeadlineExceeded, err)
	}
	if hasStatus(err) {
		return err
	}
	return withStatus(levelCode(err), err)
}

// levelCode is the status code of an error of levee's that carries none: an open breaker is
// UNAVAILABLE (the dependency is deemed down), a full bulkhead or a refused rate limit
// RESOURCE_EXHAUSTED, a time limit DEADLINE_EXCEEDED, a panic INTERNAL, a context error its
// own code, and anything else UNKNOWN.
func levelCode(err error) codes.Code {
	var perr *levee.PanicError
	switch {
	case errors.As(err, &perr):
		return codes.Internal
	case errors.Is(err, circuitbreaker.ErrCallNotPermitted):
		return codes.Unavailable
	case errors.Is(err, bulkhead.ErrBulkheadFull), errors.Is(err, ratelimiter.ErrRequestNotPermitted):
		return codes.ResourceExhausted
	case errors.Is(err, timelimiter.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	case levee.IsRejection(err):
		return codes.Unavailable
	}
	return codes.Unknown
}
