package operators

import (
	"context"

	"github.com/levee-go/levee/internal/safe"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/reactivex/rxgo/v2"
)

// RateLimiter returns an Operator that takes permissions of rl once per subscription, as
// Resilience4j's RateLimiterOperator: one, or n with Permits(n):
//
//   - the permissions are taken when the subscription starts, waiting for them as
//     rl.AcquirePermission allows (within TimeoutDuration; a wait that could not fit is
//     refused at once); a refusal is the subscription's only item, an error item carrying the
//     *ratelimiter.RequestNotPermittedError, and the upstream is never observed. A consumer
//     that cancels while waiting hands the reservation back. Asking for more permissions than
//     rl's LimitForPeriod fails the subscription with an error matching
//     ratelimiter.ErrInvalidPermits;
//   - with DrainPermissionsOnResult, every value item is offered to rl.OnResult before it is
//     forwarded, and the upstream's error to rl.OnError.
//
// A nil rl fails every subscription with ratelimiter.ErrNilRateLimiter. RateLimiter returns an
// error, and no Operator, when an option is invalid or does not apply (only Permits does).
func RateLimiter(rl *ratelimiter.RateLimiter, opts ...Option) (Operator, error) {
	set, err := collect("RateLimiter", perRateLimiter, opts)
	if err != nil {
		return nil, err
	}
	permits := set.permitsOr1()
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
			if err := rl.AcquirePermission(ctx, permits); err != nil {
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
			defer u.stop()
			r := relay(ctx, u, next, onValue)
			if r.end == failed {
				u.close()
				if onValue != nil {
					rl.OnError(r.err)
				}
				fail(ctx, next, r.err)
			}
		})
	}, nil
}
