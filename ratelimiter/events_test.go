package ratelimiter_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/ratelimiter"
)

func TestEventTypeNames(t *testing.T) {
	assert.Equal(t, "SUCCESSFUL_ACQUIRE", ratelimiter.EventSuccessfulAcquire.String())
	assert.Equal(t, "FAILED_ACQUIRE", ratelimiter.EventFailedAcquire.String())
	assert.Equal(t, "DRAINED", ratelimiter.EventDrained.String())
	assert.Equal(t, "UNKNOWN", ratelimiter.EventType(0).String())
}

func TestReservePermissionEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 2, time.Second, time.Second)
		events := record(t, rl)
		time.Sleep(250 * time.Millisecond)
		now := time.Now()
		for range 3 {
			_, _ = rl.ReservePermission(2)
		}
		rejection := &ratelimiter.RequestNotPermittedError{Name: "test"}
		assert.Equal(t, []ratelimiter.Event{
			{Name: "test", Type: ratelimiter.EventSuccessfulAcquire, Time: now, Permits: 2},
			{Name: "test", Type: ratelimiter.EventSuccessfulAcquire, Time: now, Permits: 2, Wait: 750 * time.Millisecond},
			{Name: "test", Type: ratelimiter.EventFailedAcquire, Time: now, Permits: 2, Err: rejection},
		}, events.take())
	})
}

func TestUnsubscribeStopsEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 5, time.Second, time.Second)
		got := 0
		unsubscribe := rl.Subscribe(func(ratelimiter.Event) { got++ })
		require.NoError(t, rl.AcquirePermission(t.Context(), 1))
		unsubscribe()
		unsubscribe()
		require.NoError(t, rl.AcquirePermission(t.Context(), 1))
		rl.DrainPermissions()
		assert.Equal(t, 1, got)
	})
}

// Consumers run outside every lock: one may use the limiter that is publishing.
func TestConsumerMayUseTheLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 3, time.Second, time.Second)
		var seen []int
		rl.Subscribe(func(e ratelimiter.Event) {
			seen = append(seen, rl.Metrics().AvailablePermissions)
			if e.Type == ratelimiter.EventSuccessfulAcquire && e.Permits == 2 {
				rl.DrainPermissions()
				require.NoError(t, rl.ChangeLimitForPeriod(4))
			}
		})
		require.NoError(t, rl.AcquirePermission(context.Background(), 2))
		assert.Equal(t, []int{1, 0}, seen, "the acquire saw 1 left, the nested drain 0")
		assert.Equal(t, 4, rl.Config().LimitForPeriod)
	})
}
