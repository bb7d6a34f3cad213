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
// The permit is back before the consumer sees the end of the subscription. A nil bh fails
// every subscription with bulkhead.ErrNilBulkhead.
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
			defer u.close()
			r := relay(ctx, u, next, nil)
			switch {
			case r.end == cancelled && r.items == 0:
				bh.ReleasePermission()
			case r.end == failed:
				u.close()
				bh.Release()
				fail(ctx, next, r.err)
			default:
				bh.Release()
			}
		})
	}
}
