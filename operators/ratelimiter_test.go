package operators_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/operators"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
)

// Resilience4j: the rate limiter reserves once per subscription, whatever the number
// of items.
func TestRateLimiterReservesOncePerSubscription(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newRateLimiter(t, ratelimiter.Config{LimitForPeriod: 2, LimitRefreshPeriod: time.Hour, TimeoutDuration: ratelimiter.NoWait})
		p := newProbe(1, 2, 3)
		obs := rateLimiter(t, rl)(p.Observable())
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
		obs := rateLimiter(t, rl)(rxgo.Just(1)())
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
		obs := rateLimiter(t, rl)(p.Observable())
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
		got, _ := observe(rateLimiter(t, rl)(newProbe(1, 2, errBoom).Observable()))
		assert.Equal(t, []string{"1", "2", "E:boom"}, got)
		assert.Equal(t, []string{"1", "2", "E:boom"}, seen)
		assert.Equal(t, 4, rl.Metrics().AvailablePermissions)

		observe(rateLimiter(t, rl)(rxgo.Just(9)()))
		assert.Equal(t, 0, rl.Metrics().AvailablePermissions, "drained")
	})
}

func TestRateLimiterNilFailsEachSubscription(t *testing.T) {
	_, items := observe(rateLimiter(t, nil)(rxgo.Just(1)()))
	require.Len(t, items, 1)
	assert.ErrorIs(t, items[0].E, ratelimiter.ErrNilRateLimiter)
}

// rateLimiter returns the RateLimiter operator, which these options must accept.
func rateLimiter(t *testing.T, rl *ratelimiter.RateLimiter, opts ...operators.Option) operators.Operator {
	t.Helper()
	op, err := operators.RateLimiter(rl, opts...)
	require.NoError(t, err)
	return op
}

// Permits(3) on a limiter of 5 per period: the first subscription takes 3, the second finds 2
// and is refused without observing its upstream.
func TestRateLimiterPermitsTakesNPermissionsOncePerSubscription(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newRateLimiter(t, ratelimiter.Config{LimitForPeriod: 5, LimitRefreshPeriod: time.Hour, TimeoutDuration: ratelimiter.NoWait})
		p := newProbe(1, 2, 3, 4)
		obs := rateLimiter(t, rl, operators.Permits(3))(p.Observable())
		got, _ := observe(obs)
		assert.Equal(t, []string{"1", "2", "3", "4"}, got)
		assert.Equal(t, 2, rl.Metrics().AvailablePermissions)

		_, items := observe(obs)
		require.Len(t, items, 1)
		assert.EqualError(t, items[0].E, "ratelimiter: RateLimiter 'rl' does not permit further calls")
		assert.Equal(t, int32(1), p.subs.Load(), "the refused subscription never observed its upstream")
		assert.Equal(t, 2, rl.Metrics().AvailablePermissions, "a refusal takes nothing")
	})
}

// The second subscription of 3 permissions takes the 2 left in cycle 0 and one of cycle 1, and
// waits exactly until cycle 1 begins.
func TestRateLimiterPermitsWaitsForTheCycleOfTheLastPermission(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newRateLimiter(t, ratelimiter.Config{LimitForPeriod: 5, LimitRefreshPeriod: time.Second, TimeoutDuration: 2 * time.Second})
		obs := rateLimiter(t, rl, operators.Permits(3))(rxgo.Just(1)())
		start := time.Now()
		observe(obs)
		assert.Equal(t, 2, rl.Metrics().AvailablePermissions)
		got, _ := observe(obs)
		assert.Equal(t, []string{"1"}, got)
		assert.Equal(t, time.Second, time.Since(start))
		assert.Equal(t, ratelimiter.Metrics{AvailablePermissions: 4, Cycle: 1}, rl.Metrics())
	})
}

func TestRateLimiterPermitsAboveTheLimitFailsEachSubscription(t *testing.T) {
	rl := newRateLimiter(t, ratelimiter.Config{LimitForPeriod: 5, LimitRefreshPeriod: time.Hour})
	_, items := observe(rateLimiter(t, rl, operators.Permits(6))(rxgo.Just(1)()))
	require.Len(t, items, 1)
	assert.ErrorIs(t, items[0].E, ratelimiter.ErrInvalidPermits)
	assert.EqualError(t, items[0].E, "ratelimiter: invalid number of permits: asked for 6, must be in [1, 5] (LimitForPeriod)")
	assert.Equal(t, 5, rl.Metrics().AvailablePermissions)
}

func TestRateLimiterRefusesInvalidOptions(t *testing.T) {
	rl := newRateLimiter(t, ratelimiter.Config{})
	for _, tc := range []struct {
		opt  operators.Option
		want string
	}{
		{operators.Permits(0), "operators: Permits must be >= 1, got 0"},
		{operators.Permits(-2), "operators: Permits must be >= 1, got -2"},
		{operators.Concurrency(2), "operators: option Concurrency does not apply to RateLimiter"},
	} {
		op, err := operators.RateLimiter(rl, tc.opt)
		assert.Nil(t, op)
		assert.EqualError(t, err, tc.want)
	}
}

// Under Guard, Permits applies to every attempt; it needs a rate limiter.
func TestGuardPermits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ps := levee.Patterns{
			Retry:       newRetry(t, retry.Config{MaxAttempts: 2, WaitDuration: time.Second}),
			RateLimiter: newRateLimiter(t, ratelimiter.Config{LimitForPeriod: 10, LimitRefreshPeriod: time.Hour, TimeoutDuration: ratelimiter.NoWait}),
		}
		attempts := 0
		src := func(context.Context) (rxgo.Observable, error) {
			attempts++
			if attempts == 1 {
				return nil, errBoom
			}
			return rxgo.Just("a")(), nil
		}
		obs, err := operators.Guard(ps, nil, src, operators.Permits(4))
		require.NoError(t, err)
		got, _ := observe(obs)
		assert.Equal(t, []string{"a"}, got)
		assert.Equal(t, 2, ps.RateLimiter.Metrics().AvailablePermissions, "4 per attempt, 2 attempts")

		_, err = operators.Guard(levee.Patterns{}, nil, src, operators.Permits(2))
		assert.EqualError(t, err, "operators: Permits needs a Patterns.RateLimiter")
		_, err = operators.Guard(ps, nil, src, operators.Permits(0))
		assert.EqualError(t, err, "operators: Permits must be >= 1, got 0")
	})
}
