package stream_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/stream"
)

func TestSubscribeRateLimiterRefusalNeverBuildsTheSource(t *testing.T) {
	rl := newRateLimiter(t, ratelimiter.Config{LimitForPeriod: 1, LimitRefreshPeriod: time.Hour, TimeoutDuration: ratelimiter.NoWait})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var builds atomic.Int64
	items, err := stream.Subscribe(ctx, levee.Patterns{RateLimiter: rl}, numbers(&builds, 0, 3, nil))
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2}, itemValues(drain(items)))
	items, err = stream.Subscribe(ctx, levee.Patterns{RateLimiter: rl}, numbers(&builds, 0, 3, nil))
	require.NoError(t, err)
	all := drain(items)
	require.Len(t, all, 1)
	assert.ErrorIs(t, all[0].Err, ratelimiter.ErrRequestNotPermitted)
	assert.Equal(t, int64(1), builds.Load())
}

// A subscription waiting for a reserved permission and cancelled gives the reservation back.
func TestSubscribeRateLimiterCancelledWaitReturnsTheReservation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newRateLimiter(t, ratelimiter.Config{LimitForPeriod: 1, LimitRefreshPeriod: time.Hour, TimeoutDuration: 2 * time.Hour})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		items, err := stream.Subscribe(ctx, levee.Patterns{RateLimiter: rl}, numbers(nil, 0, 1, nil))
		require.NoError(t, err)
		drain(items)
		assert.Equal(t, 0, rl.Metrics().AvailablePermissions)

		waitCtx, cancelWait := context.WithCancel(context.Background())
		var builds atomic.Int64
		waiting, err := stream.Subscribe(waitCtx, levee.Patterns{RateLimiter: rl}, numbers(&builds, 0, 1, nil))
		require.NoError(t, err)
		synctest.Wait()
		assert.Equal(t, -1, rl.Metrics().AvailablePermissions, "reserved in the next cycle")
		assert.Equal(t, 1, rl.Metrics().NumberOfWaitingCalls)
		cancelWait()
		assert.Empty(t, drain(waiting))
		assert.Equal(t, 0, rl.Metrics().AvailablePermissions)
		assert.Zero(t, builds.Load())
	})
}

// With DrainPermissionsOnResult, each element and the final error are offered to the
// predicate, as Resilience4j's operator does.
func TestSubscribeRateLimiterDrainsOnAnElementOrTheError(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  error
		want int
	}{
		{"element", nil, 0},
		{"error", errBoom, 0},
		{"neither", errors.New("other"), 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rl := newRateLimiter(t, ratelimiter.Config{LimitForPeriod: 10, LimitRefreshPeriod: time.Hour,
				DrainPermissionsOnResult: func(result any, err error) bool {
					return result == 429 || errors.Is(err, errBoom)
				}})
			require.NoError(t, rl.AcquirePermission(context.Background(), 1))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			vs := []int{1, 2}
			if tc.end == nil {
				vs = append(vs, 429)
			}
			items, err := stream.Subscribe(ctx, levee.Patterns{RateLimiter: rl}, stream.Source[int](func(_ context.Context, emit func(int) error) error {
				for _, v := range vs {
					if err := emit(v); err != nil {
						return err
					}
				}
				return tc.end
			}))
			require.NoError(t, err)
			drain(items)
			assert.Equal(t, tc.want, rl.Metrics().AvailablePermissions)
		})
	}
}

// Permits(3) on a limiter of 5 per period: the first subscription takes 3, the second finds 2
// and is refused without building its source.
func TestSubscribePermitsTakesNPermissionsOncePerAttempt(t *testing.T) {
	rl := newRateLimiter(t, ratelimiter.Config{LimitForPeriod: 5, LimitRefreshPeriod: time.Hour, TimeoutDuration: ratelimiter.NoWait})
	var builds atomic.Int64
	items, err := stream.Subscribe(context.Background(), levee.Patterns{RateLimiter: rl}, numbers(&builds, 0, 4, nil),
		stream.Permits(3))
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2, 3}, itemValues(drain(items)))
	assert.Equal(t, 2, rl.Metrics().AvailablePermissions)

	items, err = stream.Subscribe(context.Background(), levee.Patterns{RateLimiter: rl}, numbers(&builds, 0, 4, nil),
		stream.Permits(3))
	require.NoError(t, err)
	all := drain(items)
	require.Len(t, all, 1)
	assert.ErrorIs(t, all[0].Err, ratelimiter.ErrRequestNotPermitted)
	assert.Equal(t, int64(1), builds.Load())
	assert.Equal(t, 2, rl.Metrics().AvailablePermissions, "a refusal takes nothing")
}

// The second subscription of 3 takes the 2 permissions left in cycle 0 and one of cycle 1, and
// starts exactly when cycle 1 begins.
func TestSubscribePermitsWaitsForTheCycleOfTheLastPermission(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newRateLimiter(t, ratelimiter.Config{LimitForPeriod: 5, LimitRefreshPeriod: time.Second, TimeoutDuration: 2 * time.Second})
		start := time.Now()
		for range 2 {
			items, err := stream.Subscribe(t.Context(), levee.Patterns{RateLimiter: rl}, numbers(nil, 0, 1, nil),
				stream.Permits(3))
			require.NoError(t, err)
			assert.Equal(t, []int{0}, itemValues(drain(items)))
		}
		assert.Equal(t, time.Second, time.Since(start))
		assert.Equal(t, ratelimiter.Metrics{AvailablePermissions: 4, Cycle: 1}, rl.Metrics())
	})
}

func TestSubscribePermitsOptionErrors(t *testing.T) {
	rl := newRateLimiter(t, ratelimiter.Config{LimitForPeriod: 5, LimitRefreshPeriod: time.Hour})
	for _, tc := range []struct {
		ps   levee.Patterns
		opt  stream.Option
		want string
	}{
		{levee.Patterns{RateLimiter: rl}, stream.Permits(0), "stream: Permits must be >= 1, got 0"},
		{levee.Patterns{RateLimiter: rl}, stream.Permits(-1), "stream: Permits must be >= 1, got -1"},
		{levee.Patterns{}, stream.Permits(2), "stream: Permits needs a Patterns.RateLimiter"},
	} {
		items, err := stream.Subscribe(context.Background(), tc.ps, numbers(nil, 0, 1, nil), tc.opt)
		assert.Nil(t, items)
		assert.EqualError(t, err, tc.want)
	}
	items, err := stream.Subscribe(context.Background(), levee.Patterns{RateLimiter: rl}, numbers(nil, 0, 1, nil),
		stream.Permits(6))
	require.NoError(t, err)
	all := drain(items)
	require.Len(t, all, 1)
	assert.EqualError(t, all[0].Err, "ratelimiter: invalid number of permits: asked for 6, must be in [1, 5] (LimitForPeriod)")
	assert.Equal(t, 5, rl.Metrics().AvailablePermissions)
}
