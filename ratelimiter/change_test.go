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

// reserveWaits reserves one permission at a time and returns the waits.
func reserveWaits(t *testing.T, rl *ratelimiter.RateLimiter, n int) []time.Duration {
	t.Helper()
	waits := make([]time.Duration, n)
	for i := range waits {
		w, err := rl.ReservePermission(1)
		require.NoError(t, err)
		waits[i] = w
	}
	return waits
}

func TestChangeLimitForPeriodRaisesFromTheNextCycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 2, time.Second, 10*time.Second)
		require.NoError(t, rl.AcquirePermission(t.Context(), 1))
		require.NoError(t, rl.ChangeLimitForPeriod(5))
		assert.Equal(t, 1, available(rl), "the current cycle keeps its permissions")
		s := time.Second
		assert.Equal(t, []time.Duration{0, s, s, s, s, s, 2 * s}, reserveWaits(t, rl, 7))

		time.Sleep(3 * time.Second)
		assert.Equal(t, 5, available(rl))
		assert.Equal(t, 5, rl.Config().LimitForPeriod)
	})
}

func TestChangeLimitForPeriodLowersFromTheNextCycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 5, time.Second, 10*time.Second)
		require.NoError(t, rl.AcquirePermission(t.Context(), 1))
		require.NoError(t, rl.ChangeLimitForPeriod(2))
		assert.Equal(t, 4, available(rl), "the current cycle keeps its permissions")
		s := time.Second
		assert.Equal(t, []time.Duration{0, 0, 0, 0, s, s, 2 * s}, reserveWaits(t, rl, 7))
		assert.ErrorIs(t, rl.AcquirePermission(t.Context(), 3), ratelimiter.ErrInvalidPermits,
			"requests are bounded by the new limit at once")
	})
}

// Resilience4j's AtomicRateLimiter: limit 1 per 250ms; at the start of cycle 1 one caller takes
// its permission and a second waits for cycle 2; the limit then changes to 2. The reservation
// counts against the new limit of cycle 2, which has one permission left.
func TestChangeLimitForPeriodCountsTheReservationOfTheNextCycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const period = 250 * time.Millisecond
		rl := newLimiter(t, 1, period, time.Second)
		start := time.Now()
		time.Sleep(period) // the start of cycle 1
		require.NoError(t, rl.AcquirePermission(t.Context(), 1))
		woke := make(chan time.Duration, 1)
		go func() {
			assert.NoError(t, rl.AcquirePermission(t.Context(), 1))
			woke <- time.Since(start)
		}()
		synctest.Wait()
		require.NoError(t, rl.ChangeLimitForPeriod(2))
		assert.Equal(t, ratelimiter.Metrics{AvailablePermissions: -1, NumberOfWaitingCalls: 1,
			NanosToWait: period, Cycle: 1}, rl.Metrics(), "one more permission waits for cycle 2")

		time.Sleep(period + time.Nanosecond) // just after cycle 2 starts
		assert.Equal(t, 2*period, <-woke, "the waiter keeps its cycle")
		assert.Equal(t, ratelimiter.Metrics{AvailablePermissions: 1, Cycle: 2}, rl.Metrics())
		assert.Equal(t, []time.Duration{0, period - time.Nanosecond}, reserveWaits(t, rl, 2))
	})
}

// The new limit applies from the next cycle, the permissions already reserved counting against
// it, with Resilience4j's waits. When reservations reach further, the cycles before the last one
// holding them keep their limit: their waiters proceed in them whatever the new limit.
func TestChangeLimitForPeriodCountsReservations(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name      string
		limit     int
		reserve   int // single permissions reserved before the change, after a full cycle 0
		change    int
		available int             // right after the change
		waits     []time.Duration // of the next reservations
	}{
		// Cycle 1 full with 2 and keeps its limit; cycle 2 holds 1 of 5 and has 4 left.
		{"raise", 2, 3, 5, -3, []time.Duration{2 * s, 2 * s, 2 * s, 2 * s, 3 * s, 3 * s, 3 * s}},
		// Cycle 1 holds 4, two more than the new limit: they count against cycle 2 too, as in
		// Resilience4j, whose waits are ⌈(1 − (permissions + 2))/2⌉ cycles and the rest of this one.
		{"cut", 5, 4, 2, -4, []time.Duration{3 * s, 3 * s, 4 * s, 4 * s}},
		// Cycle 1 holds 1 of 2 and has one left.
		{"cut with room", 5, 1, 2, -1, []time.Duration{s, 2 * s, 2 * s, 3 * s, 3 * s, 4 * s, 4 * s}},
		// Cycle 1 holds 2 of 3 and has one left.
		{"boundary", 2, 2, 3, -2, []time.Duration{s, 2 * s, 2 * s, 2 * s}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rl := newLimiter(t, tc.limit, time.Second, 10*time.Second)
				require.NoError(t, rl.AcquirePermission(t.Context(), tc.limit))
				reserveWaits(t, rl, tc.reserve)
				require.NoError(t, rl.ChangeLimitForPeriod(tc.change))
				assert.Equal(t, tc.available, available(rl))
				assert.Equal(t, tc.waits, reserveWaits(t, rl, len(tc.waits)))
			})
		})
	}
}

func TestChangeLimitForPeriodTwiceWithReservations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := time.Second
		rl := newLimiter(t, 2, time.Second, 10*time.Second)
		require.NoError(t, rl.AcquirePermission(t.Context(), 2))
		reserveWaits(t, rl, 3) // cycle 1: 2, cycle 2: 1 of 2
		require.NoError(t, rl.ChangeLimitForPeriod(3))
		// Cycle 1 keeps its limit of 2; cycle 2 has 3, one of them reserved.
		assert.Equal(t, []time.Duration{2 * s, 2 * s, 3 * s}, reserveWaits(t, rl, 3))
		require.NoError(t, rl.ChangeLimitForPeriod(4)) // from cycle 3, which holds 1
		assert.Equal(t, -6, available(rl), "2 in cycle 1, 3 in cycle 2, 1 in cycle 3")

		time.Sleep(1500 * time.Millisecond)
		assert.Equal(t, ratelimiter.Metrics{AvailablePermissions: -4, NanosToWait: 1500 * time.Millisecond, Cycle: 1},
			rl.Metrics())
		time.Sleep(time.Second)
		assert.Equal(t, ratelimiter.Metrics{AvailablePermissions: -1, NanosToWait: 500 * time.Millisecond, Cycle: 2},
			rl.Metrics())
		time.Sleep(time.Second)
		assert.Equal(t, ratelimiter.Metrics{AvailablePermissions: 3, Cycle: 3}, rl.Metrics(), "4 minus 1 reserved")
		time.Sleep(time.Second)
		assert.Equal(t, ratelimiter.Metrics{AvailablePermissions: 4, Cycle: 4}, rl.Metrics())
	})
}

func TestChangeLimitForPeriodAfterIdleCycles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 2, time.Second, 10*time.Second)
		require.NoError(t, rl.AcquirePermission(t.Context(), 2))
		time.Sleep(5*time.Second + 100*time.Millisecond)
		require.NoError(t, rl.ChangeLimitForPeriod(4))
		assert.Equal(t, ratelimiter.Metrics{AvailablePermissions: 2, Cycle: 5}, rl.Metrics(),
			"cycle 5 has the old limit, untouched")
		assert.Equal(t, []time.Duration{0, 0, 900 * time.Millisecond, 900 * time.Millisecond},
			reserveWaits(t, rl, 4))
	})
}

func TestChangeLimitForPeriodAndTheReservationOfACancelledWaiter(t *testing.T) {
	for _, tc := range []struct {
		change    int
		available int // after the waiter is cancelled
	}{
		{1, 0},  // the same limit changes nothing: the waiter gives its permission back
		{2, -1}, // slots were renumbered: the waiter's permission stays unused
	} {
		synctest.Test(t, func(t *testing.T) {
			rl := newLimiter(t, 1, time.Second, 10*time.Second)
			require.NoError(t, rl.AcquirePermission(t.Context(), 1))
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- rl.AcquirePermission(ctx, 1) }()
			synctest.Wait()

			require.NoError(t, rl.ChangeLimitForPeriod(tc.change))
			cancel()
			assert.ErrorIs(t, <-done, context.Canceled)
			assert.Equal(t, tc.available, available(rl), "change to %d", tc.change)
		})
	}
}

func TestChangeTimeoutDurationAppliesToLaterRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 1, time.Second, ratelimiter.NoWait)
		require.NoError(t, rl.AcquirePermission(t.Context(), 1))
		_, err := rl.ReservePermission(1)
		assert.ErrorIs(t, err, ratelimiter.ErrRequestNotPermitted)

		require.NoError(t, rl.ChangeTimeoutDuration(time.Second))
		wait, err := rl.ReservePermission(1)
		require.NoError(t, err)
		assert.Equal(t, time.Second, wait)

		require.NoError(t, rl.ChangeTimeoutDuration(0))
		_, err = rl.ReservePermission(1)
		assert.ErrorIs(t, err, ratelimiter.ErrRequestNotPermitted)
	})
}
