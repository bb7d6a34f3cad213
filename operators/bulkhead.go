package operators

import (
	"context"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/internal/safe"
	"github.com/reactivex/rxgo/v2"
)

// Bulkhead returns an Operator that holds one permit of bh for each subscription's whole
// life, as Resilience4j's BulkheadOperator on a Flux:
//
//   - the permit is taken when the subscription starts, waiting up to bh's MaxWaitDuration
//     (and no longer than the consumer's context); a refusal is the subscription's only item,
//     an error item carrying the *bulkhead.BulkheadFullError, and the upstream is never
//     observed. A consumer that cancels while waiting gets nothing and holds nothing;
//   - the permit is given back exactly once: with Release (CALL_FINISHED) when the upstream
//     completes or fails, or when the consumer cancels after an item came from the upstream;
//     with ReleasePermission (no event) when the consumer cancels before any item.
//
// The permit is given back only once the upstream has stopped: however the subscription ends
// (the consumer cancels, a TimeLimiter or Retry above cuts it, an error item), the upstream is
// cancelled and Bulkhead waits until it closes its channel, discarding what it still emits,
// so that with MaxConcurrentCalls 1 no second subscription runs beside one still winding down.
// Over Lazy, that is once the Observable the Source built has closed its channel, which rxgo
// does when the goroutine behind it returns. An upstream that never closes its channel keeps
// the permit. The permit is back before the consumer sees the end of the subscription. A nil
// bh fails every subscription with bulkhead.ErrNilBulkhead.
func Bulkhead(bh *bulkhead.Bulkhead) Operator {
	return func(up rxgo.Observable) rxgo.Observable {
		return guarded(up, func(ctx context.Context, open func() (*upstream, error), next chan<- rxgo.Item) {
			if bh == nil {
				fail(ctx, next, bulkhead.ErrNilBulkhead)
				return
			}
			if err := bh.Acquire(ctx); err != nil {
				if !safe.CallerCancelled(ctx, err) {
					fail(ctx, next, err)
				}
				return
			}
			u, err := open()
			if err != nil {
				bh.ReleasePermission()
				fail(ctx, next, err)
				return
			}
			r := relay(ctx, u, next, nil)
			// The permit is held until the upstream has stopped, not merely been told to:
			// otherwise a new subscription could run beside one still winding down.
			u.stop()
			switch {
			case r.end == cancelled && r.items == 0:
				bh.ReleasePermission()
			case r.end == failed:
				bh.Release()
				fail(ctx, next, r.err)
			default:
				bh.Release()
			}
		})
	}
}
