// Package safe runs user code so that a panic becomes an error value and a nil function is
// refused, never crashing the caller.
package safe

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"
)

// ErrNilCall is returned when a nil function is given where a call is expected.
var ErrNilCall = errors.New("levee: nil call")

// PanicError is the error a panic in user code becomes. Value is what was passed to panic and
// Stack the goroutine's stack at the point of the panic. When Value is itself an error,
// Unwrap returns it, so errors.Is and errors.As see through the panic.
type PanicError struct {
	Value any
	Stack []byte
}

// NewPanicError builds the error for a recovered value, capturing the current stack.
func NewPanicError(v any) *PanicError {
	return &PanicError{Value: v, Stack: debug.Stack()}
}

func (e *PanicError) Error() string { return fmt.Sprintf("levee: panic: %v", e.Value) }

// Unwrap returns the panic value when it is an error, else nil.
func (e *PanicError) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}

// Call runs call(ctx) and turns a panic into a *PanicError and a nil call into ErrNilCall.
// It does not retain call, so a closure passed to it can stay on the caller's stack.
func Call[T any](ctx context.Context, call func(context.Context) (T, error)) (v T, err error) {
	if call == nil {
		return v, ErrNilCall
	}
	defer func() {
		if r := recover(); r != nil {
			var zero T
			v, err = zero, NewPanicError(r)
		}
	}()
	return call(ctx)
}

// Ctx returns ctx, or context.Background() when ctx is nil: levee treats a nil context as
// Background rather than crashing.
func Ctx(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}

// CallerCancelled reports whether err is the caller's own cancellation: ctx is done and err
// matches ctx.Err() or context.Cause(ctx) (a call that honours its context may return either).
// Patterns release, rather than record, such calls.
func CallerCancelled(ctx context.Context, err error) bool {
	if err == nil {
		return false
	}
	cerr := ctx.Err()
	if cerr == nil {
		return false
	}
	if Is(err, cerr) {
		return true
	}
	cause := context.Cause(ctx)
	return cause != nil && cause != cerr && Is(err, cause)
}

// CallerEnded reports whether err is the caller's own end: CallerCancelled, or an error
// matching context.DeadlineExceeded once ctx's deadline has passed, even an instant before
// ctx.Err() is set (the call's own timer may fire before the context's).
func CallerEnded(ctx context.Context, err error) bool {
	if err == nil {
		return false
	}
	if CallerCancelled(ctx, err) {
		return true
	}
	dl, ok := ctx.Deadline()
	return ok && !time.Now().Before(dl) && Is(err, context.DeadlineExceeded)
}

// Is is errors.Is(err, target) for an err that comes from user code: the Is methods of its
// chain are user code too (a typed nil pointer whose Is reads its receiver panics), and a panic
// there reports false instead of crashing the pattern that classifies err.
func Is(err, target error) (is bool) {
	defer func() {
		if recover() != nil {
			is = false
		}
	}()
	return errors.Is(err, target)
}

// Predicate calls a user predicate p(v) and returns onPanic instead of crashing when p panics.
// Patterns choose onPanic so that a broken predicate errs on the safe side (for example, a
// circuit breaker records the call as a failure).
func Predicate[V any](p func(V) bool, v V, onPanic bool) (match bool) {
	defer func() {
		if recover() != nil {
			match = onPanic
		}
	}()
	return p(v)
}

// Value calls a user function f(v) and returns onPanic instead of crashing when f panics.
func Value[V, R any](f func(V) R, v V, onPanic R) (r R) {
	defer func() {
		if recover() != nil {
			r = onPanic
		}
	}()
	return f(v)
}
