package operators

import (
	"context"
	"errors"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/reactivex/rxgo/v2"
)

// CircuitBreaker returns an Operator that guards each subscription as one call of cb, as
// Resilience4j's CircuitBreakerOperator on a Flux:
//
//   - permission is asked when the subscription starts; a refusal is the subscription's only
//     item, an error item carrying the *circuitbreaker.CallNotPermittedError, and the upstream
//     is never observed (nor, under Lazy, built);
//   - the upstream completing is a success and its first error item a failure, classified as
//     circuitbreaker.Permit.OnError does, each with the subscription's whole duration; the
//     error item is then forwarded and the upstream cancelled (an error ends a guarded
//     subscription, as in Rx). An error matching ratelimiter.ErrInvalidPermits (Permits above
//     an inner rate limiter's LimitForPeriod) releases the permission unrecorded instead;
//   - when the consumer cancels, the permission is released unrecorded (to the period that
//     granted it) if no item had come from the upstream, and the call counts as a success if
//     one had.
//
// Items are not offered to RecordResultPredicate. The outcome is recorded before the consumer sees the end of the subscription. A nil cb fails
// every subscription with circuitbreaker.ErrNilCircuitBreaker.
func CircuitBreaker(cb *circuitbreaker.CircuitBreaker) Operator {
	return func(up rxgo.Observable) rxgo.Observable {
		return guarded(up, func(ctx context.Context, open func() (*upstream, error), next chan<- rxgo.Item) {
			if cb == nil {
				fail(ctx, next, circuitbreaker.ErrNilCircuitBreaker)
				return
			}
			// The permit measures the subscription from its grant and reports to the period
			// that granted it, however late the subscription ends.
			permit, err := cb.Acquire()
			if err != nil {
				fail(ctx, next, err)
				return
			}
			u, err := open()
			if err != nil { // a mistake of the caller's, which says nothing about the dependency
				permit.Release()
				fail(ctx, next, err)
				return
			}
			defer u.stop()
			r := relay(ctx, u, next, nil)
			switch r.end {
			case completed:
				permit.OnSuccess()
			case failed:
				if errors.Is(r.err, ratelimiter.ErrInvalidPermits) {
					// Permits above the limiter's LimitForPeriod: the subscriber's mistake, made
					// before the dependency was called, says nothing about it.
					permit.Release()
				} else {
					permit.OnError(r.err) // first, so the upstream's shutdown is not timed
				}
				u.close()
				fail(ctx, next, r.err)
			case cancelled:
				if r.items > 0 {
					permit.OnSuccess()
				} else {
					permit.Release()
				}
			}
		})
	}
}
