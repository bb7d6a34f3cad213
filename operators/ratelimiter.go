package operators

import (
	"context"

	"github.com/levee-go/levee/internal/safe"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/reactivex/rxgo/v2"
)

// RateLimiter returns an Operator that takes one permission of rl for each subscription, as
// Resilience4j's RateLimiterOperator:
//
//   - the permission is taken when the subscription starts, waiting for it as
//     rl.AcquirePermission allows (within TimeoutDuration; a wait that could not fit is
//     refused at once); a refusal is the subscription's only item, an error item carrying the
//     *ratelimiter.RequestNotPermittedError, and the upstream is never observed. A consumer
//     that cancels while waiting hands the reservation back;
//   - with DrainPermissionsOnResult, every value item is offered to rl.OnResult before it is
//     forwarded, and the upstream's error to rl.OnError, as Resilience4j's operator.
//
// Resilience4j's operator delays the subscription by the reserved wait and cannot give the
// reservation back; levee's waits cancellably. A nil rl fails every subscription with
// ratelimiter.ErrNilRateLimiter.
func RateLimiter(rl *ratelimiter.RateLimiter) Operator {
	var onValue func(any)
	if rl != nil && rl.Config().DrainPermissionsOnResult != nil {
		onValue = rl.OnResult
	}
	return func(up rxgo.Observable) rxgo.Observable {
		return guarded(up, func(ctx context.Context, open func() (*upstream, error), next chan<- rxgo.Item) {
			if rl == nil {
				fail(ctx, next, ratelimiter.ErrNilRateLimiter)
				return
			}
			if err := rl.AcquirePermission(ctx, 1); err != nil {
				if !safe.CallerCancelled(ctx, err) {
					fail(ctx, next, err)
				}
				return
			}
			u, err := open()
			if err != nil {
				fail(ctx, next, err)
				return
			}
			defer u.close()
			r := relay(ctx, u, next, onValue)
			if r.end == failed {
				u.close()
				if onValue != nil {
					rl.OnError(r.err)
				}
				fail(ctx, next, r.err)
			}
		})
	}
}
