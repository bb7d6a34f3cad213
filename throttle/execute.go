package throttle

import (
	"context"

	"github.com/levee-go/levee/internal/safe"
)

// Execute runs call unless t refuses it locally: it acquires a permit (see Acquire), runs
// call(ctx), counts the outcome as Permit.OnError says, and returns call's value and error
// unchanged. An error matching ctx's own end (the caller cancelled, or its deadline passed)
// counts nothing. A panic in call counts as an accepted request and comes back as a
// *levee.PanicError. A nil ctx means context.Background(); a nil call returns levee.ErrNilCall
// and a nil t returns ErrNilThrottler.
func Execute[T any](ctx context.Context, t *Throttler, call func(context.Context) (T, error)) (T, error) {
	var zero T
	if t.unset() {
		return zero, ErrNilThrottler
	}
	if call == nil {
		return zero, safe.ErrNilCall
	}
	ctx = safe.Ctx(ctx)
	p, err := t.Acquire()
	if err != nil {
		return zero, err
	}
	v, err := safe.Call(ctx, call)
	switch {
	case safe.CallerEnded(ctx, err):
		p.Release()
	case err != nil:
		if _, panicked := err.(*safe.PanicError); panicked {
			p.OnSuccess()
		} else {
			p.OnError(err)
		}
	default:
		p.OnSuccess()
	}
	return v, err
}

// Decorator returns t as a layer for levee.Pipeline.With, in the place of a circuit breaker:
// each run of the layer is one Execute(ctx, t, next). Placed inside a Retry, each attempt is
// one request; a refusal is a levee rejection Retry does not retry by default. A nil t
// returns a nil Decorator, which With skips.
func Decorator[T any](t *Throttler) func(ctx context.Context, next func(context.Context) (T, error)) (T, error) {
	if t.unset() {
		return nil
	}
	return func(ctx context.Context, next func(context.Context) (T, error)) (T, error) {
		return Execute(ctx, t, next)
	}
}

// Admit is Acquire as a levee.Admitter (its result written as the interface literal
// levee.Permit is an alias of, so that this pattern package needs no import of levee), so
// that t joins a pipeline, a levee.Patterns
// (Admission) or a client in a breaker's place: the pipeline ends the permit with the call's
// outcome (OnSuccess, OnError, or Release for the caller's own cancellation). ctx is not
// read: the decision is local and immediate. A refusal returns t's *ThrottledError and a nil
// permit. The permit is a pointer in size, so returning it boxed allocates nothing.
func (t *Throttler) Admit(ctx context.Context) (interface {
	OnSuccess()
	OnError(err error)
	Release()
}, error) {
	p, err := t.Acquire()
	if err != nil {
		return nil, err
	}
	return p, nil
}

func isPanic(err error) bool {
	_, ok := err.(*safe.PanicError)
	return ok
}
