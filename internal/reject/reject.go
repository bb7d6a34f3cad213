// Package reject marks the errors levee's own patterns return when they refuse a call
// (circuit breaker open, bulkhead full, rate limit exceeded). Retry does not retry such
// rejections and a circuit breaker does not count them unless the user lists them explicitly.
package reject

import "github.com/levee-go/levee/internal/safe"

// Rejection is implemented by every levee rejection error.
type Rejection interface {
	error
	// LeveeRejection reports that levee refused the call before it ran.
	LeveeRejection() bool
}

// Is reports whether err, or any error in its chain, is a levee rejection: the first error of
// the chain that is a Rejection, found in the order of errors.As, decides. The walk does not
// enter a *safe.PanicError: a call that panicked ran, whatever value it panicked with (a
// rejection it got from an inner pattern, say through levee.Must), and is a failure like any
// other panic.
func Is(err error) bool {
	r, ok := find(err)
	return ok && r.LeveeRejection()
}

// find is errors.As for a Rejection target without its cost: breakers and retries classify every
// failure with Is, and errors.As with a pointer to a local moves that local to the heap. It walks
// err's tree depth first, as errors.As does, and matches an error that is a Rejection, or whose
// As method accepts a *Rejection.
func find(err error) (Rejection, bool) {
	for err != nil {
		if _, ok := err.(*safe.PanicError); ok {
			return nil, false
		}
		if r, ok := err.(Rejection); ok {
			return r, true
		}
		if a, ok := err.(interface{ As(any) bool }); ok {
			if r, ok := asMethod(a); ok {
				return r, true
			}
		}
		switch x := err.(type) {
		case interface{ Unwrap() error }:
			err = x.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range x.Unwrap() {
				if r, ok := find(e); ok {
					return r, true
				}
			}
			return nil, false
		default:
			return nil, false
		}
	}
	return nil, false
}

// asMethod asks an error's own As method for a Rejection. Its target escapes, so it is declared
// here, off the path of errors without an As method.
func asMethod(a interface{ As(any) bool }) (Rejection, bool) {
	var r Rejection
	if a.As(&r) && r != nil {
		return r, true
	}
	return nil, false
}
