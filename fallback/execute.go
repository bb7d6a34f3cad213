package fallback

import (
	"context"

	"github.com/levee-go/levee/internal/callobs"
	"github.com/levee-go/levee/internal/safe"
)

// Outcome tells how a guarded call was answered: live, or by a fallback. It is what
// ExecuteOutcome returns, and what levee's Pipeline.ExecuteOutcome reports for a whole
// composition.
type Outcome struct {
	// Fallback is true when a handler produced the value returned instead of the call: a
	// fallback answer, not a live one. It is false for a live answer, an unhandled error and a
	// failed fallback (whose *Error says so).
	Fallback bool
	// Cause is the error the handler answered; nil for a live answer and when an OnResult
	// handler replaced a successful result.
	Cause error
}

// Execute runs call with ctx and answers its failure with f, as Resilience4j's
// Decorators.withFallback. It is ExecuteOutcome without the Outcome.
func Execute[T any](ctx context.Context, f *Fallback[T], call func(context.Context) (T, error)) (T, error) {
	v, _, err := ExecuteOutcome(ctx, f, call)
	return v, err
}

// ExecuteOutcome runs call with ctx and hands its outcome to f.Handle, returning the value or
// error the caller should get and whether a handler answered. A panic in call becomes a
// *levee.PanicError that the handlers see like any other error. A nil ctx is treated as
// context.Background(). A nil f returns ErrNilFallback and a nil call levee.ErrNilCall, both
// without running anything or reaching a handler: they are mistakes, not failures to hide.
//
// A successful call allocates nothing, and call does not escape, so a closure on the caller's
// stack stays there.
func ExecuteOutcome[T any](ctx context.Context, f *Fallback[T], call func(context.Context) (T, error)) (T, Outcome, error) {
	var zero T
	if f == nil {
		return zero, Outcome{}, ErrNilFallback
	}
	if call == nil {
		return zero, Outcome{}, safe.ErrNilCall
	}
	ctx = safe.Ctx(ctx)
	v, err := safe.Call(ctx, call)
	v, o, err := f.Handle(ctx, v, err)
	if o.Fallback {
		callobs.Report(ctx, callobs.Event{Kind: callobs.Fallback, Pattern: "fallback", Name: f.name, Err: o.Cause})
	}
	return v, o, err
}
