package engine

import (
	"context"
	"time"

	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/internal/compose"
	"github.com/levee-go/levee/internal/safe"
)

// Guard makes the guarded call fn(ctx, v) through c, the one call of an element in both
// stream's stage and the operators' subscription. With a pause, a call a levee pattern refuses
// is held and retried as Pause.Call decides, and paused is the time it was held; when the stage
// stops while it is held (done closed), err is ctx.Err() and the element has no result.
func Guard[V, C any](ctx context.Context, done <-chan struct{}, pause *Pause, c *compose.Chain[C],
	fn func(context.Context, V) (C, error), v V) (val C, o fallback.Outcome, err error, paused time.Duration) {
	if pause == nil {
		val, o, err = compose.ApplyOutcome(ctx, c, fn, v)
		return val, o, err, 0
	}
	paused, ok := pause.Call(done, func(admitted func()) bool {
		val, o, err = compose.ApplyOutcome(ctx, c, func(ctx context.Context, v V) (C, error) {
			admitted()
			return fn(ctx, v)
		}, v)
		return compose.Refused(err, o)
	})
	if !ok {
		var zero C
		return zero, fallback.Outcome{}, ctx.Err(), paused
	}
	return val, o, err, paused
}

// ElementFallback asks fb, an element fallback of op ("stream" or "operators"), for the answer
// to in's failure cause, with a panic in fb turned into an error. A failing fb comes back as a
// *fallback.Error that keeps cause.
func ElementFallback[V, C any](ctx context.Context, op string, fb func(context.Context, V, error) (C, error), in V, cause error) (C, error) {
	v, err := safe.Call(ctx, func(ctx context.Context) (C, error) { return fb(ctx, in, cause) })
	if err != nil {
		return v, &fallback.Error{Name: op, Cause: cause, Err: err}
	}
	return v, nil
}
