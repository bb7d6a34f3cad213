package operators

import (
	"context"
	"errors"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/internal/safe"
	"github.com/reactivex/rxgo/v2"
)

// ErrEmpty is returned by First when the Observable completed without a value.
var ErrEmpty = errors.New("operators: observable completed without a value")

// errStop ends First's subscription once it has its value.
var errStop = errors.New("operators: stop")

// Collect observes obs under ctx and returns its values, which must be of type T, in order.
// It returns at the first error item, with the values before it and that item's error, and
// cancels the subscription there; an item of another type ends it with an *ItemTypeError.
// When ctx ends first it returns the values so far and ctx.Err(): rxgo's ToSlice reports a
// cancelled subscription as a complete one, with a nil error. A nil ctx means
// context.Background().
func Collect[T any](ctx context.Context, obs rxgo.Observable) ([]T, error) {
	var out []T
	err := drain(safe.Ctx(ctx), obs, nil, func(v T) error {
		out = append(out, v)
		return nil
	})
	return out, err
}

// ForEach observes obs under ctx and calls fn with each of its values, which must be of type
// T, on the caller's goroutine. It returns nil when obs completed; the error of obs's first
// error item, or of fn, and cancels the subscription there; an *ItemTypeError for an item of
// another type; or ctx.Err() when ctx ended first. rxgo's ForEach goes on after an error item,
// then reports completion, and reports a cancelled subscription as complete too. A nil ctx
// means context.Background(). A nil fn returns levee.ErrNilCall without observing obs.
func ForEach[T any](ctx context.Context, obs rxgo.Observable, fn func(T) error) error {
	if fn == nil {
		return levee.ErrNilCall
	}
	return drain(safe.Ctx(ctx), obs, nil, fn)
}

// First observes obs under ctx and returns its first value, which must be of type T, then
// cancels the subscription, so that nothing upstream is left blocked (rxgo's First leaks its
// upstream unless given a context, and its Get may report a cancellation as an empty
// result). It returns the error of an error item that comes first, ErrEmpty when obs completed
// without a value, or ctx.Err() when ctx ended first. A nil ctx means context.Background().
func First[T any](ctx context.Context, obs rxgo.Observable) (T, error) {
	var first T
	err := drain(safe.Ctx(ctx), obs, nil, func(v T) error {
		first = v
		return errStop
	})
	switch {
	case err == errStop:
		return first, nil
	case err == nil:
		return first, ErrEmpty
	default:
		return first, err
	}
}

// drain observes obs under a child of ctx, cancelled when it returns, and hands each value to
// fn until obs completes (nil), emits an error item (its error), fn fails (fn's error), or
// ctx ends (ctx.Err(), even when rxgo closed the channel as if obs had completed).
func drain[T any](ctx context.Context, obs rxgo.Observable, seen *observed, fn func(T) error) error {
	u, err := open(ctx, obs, seen)
	if err != nil {
		return err
	}
	defer u.close()
	done := ctx.Done()
	for index := 0; ; index++ {
		it, ok := u.receive(done)
		if err := ctx.Err(); err != nil {
			return err
		}
		if !ok {
			return nil
		}
		if it.E != nil {
			return it.E
		}
		v, err := as[T](it.V, index)
		if err != nil {
			return err
		}
		if err := fn(v); err != nil {
			return err
		}
	}
}
