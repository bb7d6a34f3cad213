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

// Is reports whether err, or any error in its chain, is a levee rejection: the first error
// of the chain that is a Rejection (or whose As method yields one), in the order errors.As
// walks it, decides. The walk does not enter a *safe.PanicError: a call that panicked ran,
// whatever value it panicked with (a rejection it got from an inner pattern, say through
// levee.Must), and is a failure like any other panic.
//
// The walk is written out rather than done with errors.As, whose pointer to a local moves the
// target to the heap on every call: breakers and retries classify every failure with Is, and
// errors.AsType, which avoids that, needs Go 1.26.
func Is(err error) bool {
	r, ok := find(err)
	return ok && r.LeveeRejection()
}

func find(err error) (Rejection, bool) {
	for err != nil {
		if _, ok := err.(*safe.PanicError); ok {
			return nil, false
		}
		if r, ok := err.(Rejection); ok {
			return r, true
		}
		if x, ok := err.(interface{ As(any) bool }); ok {
			var r Rejection // on the heap, but only for errors with an As method
			if x.As(&r) {
				return r, true
			}
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
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
