package ratelimiter_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/ratelimiter"
)

func TestDrainPermissionsEmptiesTheCurrentCycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 5, time.Second, 5*time.Second)
		events := record(t, rl)
		require.NoError(t, rl.AcquirePermission(t.Context(), 2))
		events.take()

		now := time.Now()
		rl.DrainPermissions()
		assert.Equal(t, []ratelimiter.Event{{Name: "test", Type: ratelimiter.EventDrained, Time: now, Permits: 3}},
			events.take())
		assert.Equal(t, ratelimiter.Metrics{AvailablePermissions: 0, NanosToWait: time.Second}, rl.Metrics())
		rl.DrainPermissions()
		assert.Equal(t, 0, events.take()[0].Permits, "nothing left to drain")

		time.Sleep(time.Second)
		assert.Equal(t, 5, available(rl), "the next cycle starts full")
	})
}

// Resilience4j computes a drain from its stored cycle; right after a rollover, with no request
// in the new cycle yet, it leaves the new cycle full. levee drains the cycle it is in.
func TestDrainRightAfterRolloverDrainsTheNewCycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 3, time.Second, 5*time.Second)
		events := record(t, rl)
		require.NoError(t, rl.AcquirePermission(t.Context(), 1))
		time.Sleep(time.Second)
		events.take()

		rl.DrainPermissions()
		assert.Equal(t, 3, events.take()[0].Permits, "the three of cycle 1")
		assert.Equal(t, ratelimiter.Metrics{AvailablePermissions: 0, NanosToWait: time.Second, Cycle: 1}, rl.Metrics())
		start := time.Now()
		require.NoError(t, rl.AcquirePermission(t.Context(), 1))
		assert.Equal(t, time.Second, time.Since(start), "waits for cycle 2")
	})
}

// Resilience4j's drain wipes reservations (permissions set to zero), so the cycle they wait for
// admits them and a full cycle more. levee keeps them.
func TestDrainKeepsReservations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 2, time.Second, 5*time.Second)
		require.NoError(t, rl.AcquirePermission(t.Context(), 2))
		wait, err := rl.ReservePermission(1) // slot 2, cycle 1
		require.NoError(t, err)
		assert.Equal(t, time.Second, wait)

		rl.DrainPermissions()
		assert.Equal(t, -1, available(rl), "the reservation stands")
		wait, err = rl.ReservePermission(1)
		require.NoError(t, err)
		assert.Equal(t, time.Second, wait, "cycle 1 has one permission left, not two")
		wait, err = rl.ReservePermission(1)
		require.NoError(t, err)
		assert.Equal(t, 2*time.Second, wait)
	})
}
