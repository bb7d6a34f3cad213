package operators_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/operators"
	"github.com/levee-go/levee/ratelimiter"
)

// TestHammerSharedPatterns runs 64 goroutines of guarded subscriptions and guarded maps over
// one breaker, one bulkhead and one rate limiter, a quarter of them cancelling early, and
// checks that every subscription was counted exactly once and every permit came back.
func TestHammerSharedPatterns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const workers, rounds = 64, 8
		cb := newBreaker(t, circuitbreaker.Config{SlidingWindowSize: 10000, MinimumNumberOfCalls: 10000})
		mapCB := newBreaker(t, circuitbreaker.Config{SlidingWindowSize: 10000, MinimumNumberOfCalls: 10000})
		bh := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 4, MaxWaitDuration: time.Hour})
		rl := newRateLimiter(t, ratelimiter.Config{LimitForPeriod: 1000, LimitRefreshPeriod: time.Millisecond})
		ps := levee.Patterns{CircuitBreaker: cb, Bulkhead: bh, RateLimiter: rl}
		pipeline := levee.Compose[int]().WithBulkhead(bh).WithCircuitBreaker(mapCB)

		var completed, failedSubs, cancelledAfterItem atomic.Int64
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := range rounds {
					switch (w + r) % 4 {
					case 0:
						p := newProbe(1, 2, 3)
						p.gap = time.Millisecond
						got, _ := observe(mustGuard(t)(operators.Guard(ps, nil, p.Source(nil))))
						assert.Equal(t, []string{"1", "2", "3"}, got)
						completed.Add(1)
					case 1:
						got, _ := observe(mustGuard(t)(operators.Guard(ps, nil, newProbe(1, errBoom).Source(nil))))
						assert.Equal(t, []string{"1", "E:boom"}, got)
						failedSubs.Add(1)
					case 2:
						p := newProbe(1, 2)
						p.hang = true
						assert.Equal(t, []string{"1"}, take(mustGuard(t)(operators.Guard(ps, nil, p.Source(nil))), 1))
						cancelledAfterItem.Add(1)
					case 3:
						m := mustOp(t)(operators.Map(pipeline, func(ctx context.Context, v int) (int, error) {
							time.Sleep(time.Millisecond)
							return v, nil
						}, operators.Concurrency(3)))
						assert.Equal(t, []string{"1", "2", "3", "4", "5"}, take(m(rxgo.Just(ints(50)...)()), 5))
					}
				}
			}()
		}
		wg.Wait()
		synctest.Wait()

		m := cb.Metrics()
		assert.Equal(t, int(completed.Load()+cancelledAfterItem.Load()), m.NumberOfSuccessfulCalls)
		assert.Equal(t, int(failedSubs.Load()), m.NumberOfFailedCalls)
		assert.Equal(t, int64(workers*rounds/4), completed.Load())
		assert.Equal(t, 0, mapCB.Metrics().NumberOfFailedCalls, "cancelled calls are released, not failed")
		assert.GreaterOrEqual(t, mapCB.Metrics().NumberOfSuccessfulCalls, workers*rounds/4*5)
		bm := bh.Metrics()
		assert.Equal(t, 4, bm.AvailableConcurrentCalls, "every permit came back")
		assert.Equal(t, 0, bm.NumberOfWaitingCalls)
	})
}
