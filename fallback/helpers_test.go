package fallback_test

import (
	"context"
	"errors"
	"fmt"
)

// GatewayError is a concrete error type with a cause, as a payment or pricing client returns.
type GatewayError struct {
	Status int
	Err    error
}

func (e *GatewayError) Error() string { return fmt.Sprintf("gateway: status %d: %v", e.Status, e.Err) }
func (e *GatewayError) Unwrap() error { return e.Err }

// Timeout makes *GatewayError implement timeouter.
func (e *GatewayError) Timeout() bool { return e.Status == 504 }

type timeouter interface {
	error
	Timeout() bool
}

// valueError is a non-pointer error type.
type valueError struct{ code int }

func (e valueError) Error() string { return fmt.Sprintf("value error %d", e.code) }

// listError is not comparable (it holds a slice): == on two of them would panic.
type listError struct{ items []string }

func (e listError) Error() string { return fmt.Sprintf("list error %v", e.items) }

// isError claims to be target through its Is method, as errors.Is allows.
type isError struct{ target error }

func (e *isError) Error() string        { return "is-error" }
func (e *isError) Is(target error) bool { return target == e.target }

// asError becomes a *GatewayError through its As method, as errors.As allows.
type asError struct{ gw *GatewayError }

func (e *asError) Error() string { return "as-error" }
func (e *asError) As(target any) bool {
	if p, ok := target.(**GatewayError); ok {
		*p = e.gw
		return true
	}
	return false
}

// multiError unwraps to several errors, as errors.Join does.
type multiError struct{ errs []error }

func (e *multiError) Error() string   { return "multi" }
func (e *multiError) Unwrap() []error { return e.errs }

// panickyIs panics in its Is method.
type panickyIs struct{}

func (panickyIs) Error() string { return "panicky" }
func (panickyIs) Is(error) bool { panic("Is exploded") }

var (
	errBoom     = errors.New("boom")
	errNotFound = errors.New("not found")
	errOther    = errors.New("other")
)

// Money is the Bookshelf price.
type Money struct {
	ISBN  string
	Cents int
	Stale bool
}

// answer returns a handler function that answers with s.
func answer(s string) func(context.Context, error) (string, error) {
	return func(context.Context, error) (string, error) { return s, nil }
}

// failing returns a call that fails with err.
func failing[T any](err error) func(context.Context) (T, error) {
	return func(context.Context) (T, error) { var zero T; return zero, err }
}

// errorsIs is errors.Is, for goroutines that must not call t.FailNow.
func errorsIs(err, target error) bool { return errors.Is(err, target) }
