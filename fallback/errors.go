package fallback

import (
	"errors"
	"fmt"

	"github.com/levee-go/levee/internal/safe"
)

// ErrNilFallback is returned, never panicked, when a nil *Fallback is used.
var ErrNilFallback = errors.New("fallback: nil or zero *Fallback (create one with fallback.New)")

// Error is returned when a handler was chosen but could not answer: it returned an error, it
// panicked (Err is then a *levee.PanicError), or choosing it panicked (an Is or As method of a
// link, or an OnResult predicate). Its chain holds both Err and Cause, so errors.Is and
// errors.As find the handler's error and the original one.
type Error struct {
	Name  string // the Fallback's name
	Cause error  // the error the handler was asked to answer; nil when it was replacing a result
	Err   error  // what the handler returned or raised
}

// Error reads `fallback "NAME": ERR (cause: CAUSE)`; the cause is left out when Err already
// holds it (as an error made by FailFast usually does) or when there is none.
func (e *Error) Error() string {
	// safe.Is: an Is method of a user's error must not make printing this error panic.
	if e.Cause == nil || safe.Is(e.Err, e.Cause) {
		return fmt.Sprintf("fallback %q: %v", e.Name, e.Err)
	}
	return fmt.Sprintf("fallback %q: %v (cause: %v)", e.Name, e.Err, e.Cause)
}

// Unwrap returns the handler's error and then the cause, so errors.As looks at the handler's
// error first.
func (e *Error) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Cause}
}

// nilFallback is the error of a method called on a nil *Fallback; it keeps err, if any.
func nilFallback(err error) error {
	if err == nil {
		return ErrNilFallback
	}
	return fmt.Errorf("%w (while handling: %w)", ErrNilFallback, err)
}
