package operators_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/operators"
	"github.com/levee-go/levee/ratelimiter"
)

// Resilience4j §10.11: the rate limiter reserves once per subscription, whatever the number
// of items.
func TestRateLimiterReservesOncePerSubscription(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newRateLimiter(t, ratelimiter.Config{LimitForPeriod: 2, LimitRefreshPeriod: time.Hour, TimeoutDuration: ratelimiter.NoWait})
		p := newProbe(1, 2, 3)
		obs := operators.RateLimiter(rl)(p.Observable())
		for range 2 {
			got, _ := observe(obs)
			assert.Equal(t, []string{"1", "2", "3"}, got)
		}
		_, items := observe(obs)
		require.Len(t, items, 1)
		assert.ErrorIs(t, items[0].E, ratelimiter.ErrRequestNotPermitted)
		assert.Equal(t, int32(2), p.subs.Load(), "a refused subscription never observes its upstream")
	})
}

func TestRateLimiterWaitsForTheNextCycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newRateLimiter(t, ratelimiter.Config{LimitForPeriod: 1, LimitRefreshPeriod: time.Second, TimeoutDuration: 2 * time.Second})
		obs := operators.RateLimiter(rl)(rxgo.Just(1)())
		start := time.Now()
		observe(obs)
		got, _ := observe(obs)
		assert.Equal(t, []string{"1"}, got)
		assert.Equal(t, time.Second, time.Since(start))
	})
}

func TestRateLimiterCancelledWaitHandsTheReservationBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newRateLimiter(t, ratelimiter.Config{LimitForPeriod: 1, LimitRefreshPeriod: time.Second, TimeoutDuration: 2 * time.Second})
		p := newProbe(1)
		obs := operators.RateLimiter(rl)(p.Observable())
		observe(obs)
		ctx, cancel := context.WithCancel(context.Background())
		ch := obs.Observe(rxgo.WithContext(ctx))
		synctest.Wait()
		assert.Equal(t, -1, rl.Metrics().AvailablePermissions, "reserved in the next cycle")
		cancel()
		for range ch {
		}
		assert.Equal(t, 0, rl.Metrics().AvailablePermissions)
		assert.Equal(t, int32(1), p.subs.Load())
	})
}

func TestRateLimiterOffersEachItemAndTheErrorToDrainPermissionsOnResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen []string
		rl := newRateLimiter(t, ratelimiter.Config{LimitForPeriod: 5, LimitRefreshPeriod: time.Hour,
			DrainPermissionsOnResult: func(result any, err error) bool {
				if err != nil {
					seen = append(seen, "E:"+err.Error())
				} else {
					seen = append(seen, show(rxgo.Of(result)))
				}
				return result == 9
			}})
		got, _ := observe(operators.RateLimiter(rl)(newProbe(1, 2, errBoom).Observable()))
		assert.Equal(t, []string{"1", "2", "E:boom"}, got)
		assert.Equal(t, []string{"1", "2", "E:boom"}, seen)
		assert.Equal(t, 4, rl.Metrics().AvailablePermissions)

		observe(operators.RateLimiter(rl)(rxgo.Just(9)()))
		assert.Equal(t, 0, rl.Metrics().AvailablePermissions, "drained")
	})
}

func TestRateLimiterNilFailsEachSubscription(t *testing.T) {
	_, items := observe(operators.RateLimiter(nil)(rxgo.Just(1)()))
	require.Len(t, items, 1)
	assert.ErrorIs(t, items[0].E, ratelimiter.ErrNilRateLimiter)
}
