package fallback

import (
	"context"
	"time"

	"github.com/levee-go/levee/internal/safe"
)

// Recover answers err with the handler chosen for it and reports whether a handler answered.
// It is the low-level form of Execute for callers that ran the call themselves (the composition
// layer, streams, futures).
//
//   - A handler answered: (its value, true, nil).
//   - A handler returned an error or panicked: (zero, false, *Error) whose chain holds both the
//     handler's error (a *levee.PanicError after a panic) and err.
//   - No handler matched, or err is the caller's own cancellation (ctx is done and err matches
//     ctx.Err()) and no OnError handler targets context.Canceled or context.DeadlineExceeded:
//     (zero, false, err), err being the very value given.
//   - err is nil: (zero, false, nil); use Handle to check results against OnResult handlers.
//
// A nil ctx is treated as context.Background(). On a nil *Fallback, Recover returns an error
// matching both ErrNilFallback and err.
func (f *Fallback[T]) Recover(ctx context.Context, err error) (v T, answered bool, ferr error) {
	if f == nil {
		return v, false, nilFallback(err)
	}
	if err == nil {
		return v, false, nil
	}
	v, out, ferr := f.recover(safe.Ctx(ctx), err)
	return v, out.Fallback, ferr
}

// Handle applies the Fallback to a finished call's outcome (v, err) and returns what the caller
// should get: for an error, what Recover gives, with Outcome{Fallback: true, Cause: err} when a
// handler answered; for a result, v itself unless an OnResult handler's predicate reports true,
// in which case that handler's answer and Outcome{Fallback: true} (Cause nil), or an *Error when
// it fails. It is the shape of Resilience4j's withFallback(BiFunction): ExecuteOutcome is the
// call run through safe.Call followed by Handle. A nil ctx is treated as context.Background(); a
// successful result allocates nothing. On a nil *Fallback, Handle returns ErrNilFallback (joined
// with err when there is one), even for a successful call: a missing fallback is a mistake.
func (f *Fallback[T]) Handle(ctx context.Context, v T, err error) (T, Outcome, error) {
	if f == nil {
		var zero T
		return zero, Outcome{}, nilFallback(err)
	}
	if err == nil {
		if len(f.onResult) == 0 {
			return v, Outcome{}, nil
		}
		return f.replace(safe.Ctx(ctx), v)
	}
	return f.recover(safe.Ctx(ctx), err)
}

// recover is Recover for a non-nil err and ctx.
func (f *Fallback[T]) recover(ctx context.Context, err error) (T, Outcome, error) {
	var zero T
	cancelled := safe.CallerCancelled(ctx, err)
	h, arg, perr := f.choose(err, cancelled)
	if perr != nil { // an Is or As method of a link panicked
		return zero, Outcome{}, f.fail(nil, err, perr, 0)
	}
	if h == nil {
		if !cancelled { // the caller's own cancellation is released, not counted
			f.unhandled.Add(1)
			if f.events.Active() {
				f.events.Publish(Event{Name: f.name, Type: EventUnhandled, Time: time.Now(), Cause: err})
			}
		}
		return zero, Outcome{}, err
	}
	if h.kind != kindType {
		arg = err // sentinel and catch-all handlers receive the whole error
	}

	active := f.events.Active()
	var start time.Time
	if active {
		start = time.Now()
	}
	v, herr := runHandler(ctx, h.run, arg)
	var d time.Duration
	if active {
		d = time.Since(start)
	}
	if herr != nil {
		return zero, Outcome{}, f.fail(h, err, herr, d)
	}
	f.answer(h, err, d, active)
	return v, Outcome{Fallback: true, Cause: err}, nil
}

// choose finds the handler for err. A link's Is or As method is user code: its panic comes back
// as perr instead of crossing the caller's stack.
func (f *Fallback[T]) choose(err error, cancelled bool) (h *handler[T], arg error, perr error) {
	defer func() {
		if r := recover(); r != nil {
			h, arg, perr = nil, nil, safe.NewPanicError(r)
		}
	}()
	hs := f.onErr
	if cancelled {
		hs = f.onCancel
	}
	if len(hs) > 0 {
		if h, arg = find(hs, err); h != nil {
			return h, arg, nil
		}
	}
	if !cancelled && f.catchAll != nil {
		return f.catchAll, err, nil
	}
	return nil, nil, nil
}

// find walks err's chain as errors.Is does (depth-first, pre-order, through Unwrap() error and
// Unwrap() []error) and returns the first handler, in hs's order, that matches the first link
// any of them matches.
func find[T any](hs []handler[T], err error) (*handler[T], error) {
	for {
		for i := range hs {
			if arg, ok := hs[i].match(err); ok {
				return &hs[i], arg
			}
		}
		switch x := err.(type) {
		case interface{ Unwrap() error }:
			if err = x.Unwrap(); err == nil {
				return nil, nil
			}
		case interface{ Unwrap() []error }:
			for _, e := range x.Unwrap() {
				if e == nil {
					continue
				}
				if h, arg := find(hs, e); h != nil {
					return h, arg
				}
			}
			return nil, nil
		default:
			return nil, nil
		}
	}
}

// replace runs the first OnResult handler whose predicate matches v.
func (f *Fallback[T]) replace(ctx context.Context, v T) (T, Outcome, error) {
	var zero T
	h, perr := chooseResult(f.onResult, v)
	if perr != nil {
		return zero, Outcome{}, f.fail(h, nil, perr, 0)
	}
	if h == nil {
		return v, Outcome{}, nil
	}
	active := f.events.Active()
	var start time.Time
	if active {
		start = time.Now()
	}
	r, herr := runReplace(ctx, h.replace, v)
	var d time.Duration
	if active {
		d = time.Since(start)
	}
	if herr != nil {
		return zero, Outcome{}, f.fail(h, nil, herr, d)
	}
	f.answer(h, nil, d, active)
	return r, Outcome{Fallback: true}, nil
}

// chooseResult returns the first handler whose predicate reports true for v; a panicking
// predicate returns its handler and the panic as perr.
func chooseResult[T any](hs []handler[T], v T) (h *handler[T], perr error) {
	defer func() {
		if r := recover(); r != nil {
			perr = safe.NewPanicError(r)
		}
	}()
	for i := range hs {
		h = &hs[i]
		if h.pred(v) {
			return h, nil
		}
	}
	return nil, nil
}

// runHandler runs an error handler, turning its panic into a *safe.PanicError. Unlike
// safe.Call it needs no closure binding err, so choosing and running a handler stays cheap.
func runHandler[T any](ctx context.Context, fn func(context.Context, error) (T, error), err error) (v T, herr error) {
	defer func() {
		if r := recover(); r != nil {
			var zero T
			v, herr = zero, safe.NewPanicError(r)
		}
	}()
	return fn(ctx, err)
}

// runReplace runs a result handler, turning its panic into a *safe.PanicError.
func runReplace[T any](ctx context.Context, fn func(context.Context, T) (T, error), in T) (v T, herr error) {
	defer func() {
		if r := recover(); r != nil {
			var zero T
			v, herr = zero, safe.NewPanicError(r)
		}
	}()
	return fn(ctx, in)
}

// answer counts and publishes a handler's answer.
func (f *Fallback[T]) answer(h *handler[T], cause error, d time.Duration, active bool) {
	f.answered.Add(1)
	if active {
		f.events.Publish(Event{Name: f.name, Type: EventAnswered, Time: time.Now(), Duration: d,
			Handler: h.desc, Cause: cause})
	}
}

// fail counts and publishes a failed fallback and returns the caller's error, which keeps both
// the handler's error and the cause. h is nil when choosing the handler failed.
func (f *Fallback[T]) fail(h *handler[T], cause, herr error, d time.Duration) error {
	f.failed.Add(1)
	if f.events.Active() {
		e := Event{Name: f.name, Type: EventFailed, Time: time.Now(), Duration: d, Cause: cause, Err: herr}
		if h != nil {
			e.Handler = h.desc
		}
		f.events.Publish(e)
	}
	return &Error{Name: f.name, Cause: cause, Err: herr}
}
