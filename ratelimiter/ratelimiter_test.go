package ratelimiter_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/ratelimiter"
)

// Resilience4j: cycles are counted from the limiter's creation, not from the wall
// clock's round seconds.
func TestCyclesAreRelativeToCreation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		time.Sleep(300 * time.Millisecond) // the bubble starts on a round second; leave it
		rl := newLimiter(t, 2, time.Second, 5*time.Second)
		require.NoError(t, rl.AcquirePermission(t.Context(), 2))

		time.Sleep(699 * time.Millisecond) // wall clock passed a round second, the cycle did not
		assert.Equal(t, ratelimiter.Metrics{AvailablePermissions: 0, NanosToWait: 301 * time.Millisecond},
			rl.Metrics())
		wait, err := rl.ReservePermission(1)
		require.NoError(t, err)
		assert.Equal(t, 301*time.Millisecond, wait)

		time.Sleep(301 * time.Millisecond) // one period after creation
		assert.Equal(t, ratelimiter.Metrics{AvailablePermissions: 1, Cycle: 1}, rl.Metrics())
	})
}

// Resilience4j: unused permissions do not accumulate beyond the limit.
func TestUnusedPermitsDoNotAccumulate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 3, time.Second, 5*time.Second)
		time.Sleep(10 * time.Second) // ten idle cycles
		assert.Equal(t, ratelimiter.Metrics{AvailablePermissions: 3, Cycle: 10}, rl.Metrics())

		for range 3 {
			wait, err := rl.ReservePermission(1)
			require.NoError(t, err)
			assert.Zero(t, wait)
		}
		wait, err := rl.ReservePermission(1)
		require.NoError(t, err)
		assert.Equal(t, time.Second, wait, "the fourth waits for cycle 11")
	})
}

// Resilience4j: reservations make the available permissions negative.
func TestReservationsMakePermissionsNegative(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 2, time.Second, 5*time.Second)
		require.NoError(t, rl.AcquirePermission(t.Context(), 2))

		for _, step := range []struct {
			permits   int
			wait      time.Duration
			available int
			next      time.Duration // NanosToWait afterwards
		}{
			{1, 1 * time.Second, -1, 1 * time.Second}, // slot 2: cycle 1
			{2, 2 * time.Second, -3, 2 * time.Second}, // slots 3, 4: the last in cycle 2
			{1, 2 * time.Second, -4, 3 * time.Second}, // slot 5: cycle 2, which is then full
			{2, 3 * time.Second, -6, 4 * time.Second}, // slots 6, 7: cycle 3
		} {
			wait, err := rl.ReservePermission(step.permits)
			require.NoError(t, err)
			assert.Equal(t, step.wait, wait)
			assert.Equal(t, ratelimiter.Metrics{AvailablePermissions: step.available, NanosToWait: step.next},
				rl.Metrics())
		}

		time.Sleep(2500 * time.Millisecond)
		assert.Equal(t, ratelimiter.Metrics{AvailablePermissions: -2, NanosToWait: 1500 * time.Millisecond, Cycle: 2},
			rl.Metrics())
		time.Sleep(1500 * time.Millisecond)
		assert.Equal(t, ratelimiter.Metrics{AvailablePermissions: 2, Cycle: 4}, rl.Metrics())
	})
}

// Resilience4j says a rejected blocking caller still waits the full timeout; levee
// refuses it at once, taking nothing.
func TestRejectedCallerIsRefusedAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 1, time.Second, 500*time.Millisecond)
		events := record(t, rl)
		require.NoError(t, rl.AcquirePermission(t.Context(), 1))
		events.take()

		start := time.Now()
		err := rl.AcquirePermission(t.Context(), 1)
		assert.Zero(t, time.Since(start), "no fake time passed")
		assert.ErrorIs(t, err, ratelimiter.ErrRequestNotPermitted)
		var rejected *ratelimiter.RequestNotPermittedError
		require.ErrorAs(t, err, &rejected)
		assert.Equal(t, "test", rejected.Name)
		assert.EqualError(t, err, "ratelimiter: RateLimiter 'test' does not permit further calls")
		assert.True(t, levee.IsRejection(err))

		assert.Equal(t, ratelimiter.Metrics{AvailablePermissions: 0, NanosToWait: time.Second}, rl.Metrics(),
			"nothing was reserved")
		assert.Equal(t, []ratelimiter.Event{{Name: "test", Type: ratelimiter.EventFailedAcquire,
			Time: start, Permits: 1, Err: err}}, events.take())
	})
}

// Resilience4j says an interrupted waiter does not give its reservation back; levee
// gives it back when it is the last one.
func TestCancelledWaiterGivesReservationBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 1, time.Second, 5*time.Second)
		events := record(t, rl)
		require.NoError(t, rl.AcquirePermission(t.Context(), 1))
		time.Sleep(200 * time.Millisecond)
		events.take()

		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- rl.AcquirePermission(ctx, 1) }()
		synctest.Wait()
		assert.Equal(t, ratelimiter.Metrics{AvailablePermissions: -1, NumberOfWaitingCalls: 1,
			NanosToWait: 1800 * time.Millisecond}, rl.Metrics())

		start := time.Now()
		cancel()
		err := <-done
		assert.Zero(t, time.Since(start))
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, ratelimiter.Metrics{AvailablePermissions: 0, NanosToWait: 800 * time.Millisecond},
			rl.Metrics(), "the reservation is back")
		assert.Equal(t, []ratelimiter.Event{{Name: "test", Type: ratelimiter.EventFailedAcquire,
			Time: start, Permits: 1, Err: context.Canceled}}, events.take())

		wait, err := rl.ReservePermission(1)
		require.NoError(t, err)
		assert.Equal(t, 800*time.Millisecond, wait, "the next caller gets the returned permission")
	})
}

func TestCancelledWaiterBeforeAnotherLeavesItsPermissionsUnused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 1, time.Second, 5*time.Second)
		require.NoError(t, rl.AcquirePermission(t.Context(), 1)) // slot 0, cycle 0

		ctxA, cancelA := context.WithCancel(t.Context())
		ctxB, cancelB := context.WithCancel(t.Context())
		defer cancelB()
		doneA, doneB := make(chan error, 1), make(chan time.Duration, 1)
		go func() { doneA <- rl.AcquirePermission(ctxA, 1) }() // slot 1, cycle 1
		synctest.Wait()
		start := time.Now()
		go func() { // slot 2, cycle 2
			require.NoError(t, rl.AcquirePermission(ctxB, 1))
			doneB <- time.Since(start)
		}()
		synctest.Wait()

		cancelA()
		assert.ErrorIs(t, <-doneA, context.Canceled)
		assert.Equal(t, ratelimiter.Metrics{AvailablePermissions: -2, NumberOfWaitingCalls: 1,
			NanosToWait: 3 * time.Second}, rl.Metrics(), "slot 1 stays taken: B holds slot 2")

		wait, err := rl.ReservePermission(1)
		require.NoError(t, err)
		assert.Equal(t, 3*time.Second, wait, "slot 3, cycle 3")
		assert.Equal(t, 2*time.Second, <-doneB, "B proceeds in its own cycle")
	})
}

func TestAcquireWaitsForItsCycleExactly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 1, time.Second, 5*time.Second)
		events := record(t, rl)
		time.Sleep(300 * time.Millisecond)
		require.NoError(t, rl.AcquirePermission(t.Context(), 1))

		start := time.Now()
		require.NoError(t, rl.AcquirePermission(t.Context(), 1))
		assert.Equal(t, 700*time.Millisecond, time.Since(start), "until cycle 1 begins")
		assert.Equal(t, []ratelimiter.Event{
			{Name: "test", Type: ratelimiter.EventSuccessfulAcquire, Time: start, Permits: 1},
			{Name: "test", Type: ratelimiter.EventSuccessfulAcquire, Time: start.Add(700 * time.Millisecond),
				Permits: 1, Wait: 700 * time.Millisecond},
		}, events.take())
		assert.Equal(t, ratelimiter.Metrics{AvailablePermissions: 0, NanosToWait: time.Second, Cycle: 1}, rl.Metrics())
	})
}

func TestTimeoutBoundaryIsInclusive(t *testing.T) {
	for _, tc := range []struct {
		timeout time.Duration
		ok      bool
	}{
		{700 * time.Millisecond, true},
		{700*time.Millisecond - 1, false},
		{ratelimiter.NoWait, false},
		{2 * time.Second, true},
	} {
		t.Run(tc.timeout.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rl := newLimiter(t, 1, time.Second, tc.timeout)
				time.Sleep(300 * time.Millisecond)
				require.NoError(t, rl.AcquirePermission(t.Context(), 1))
				wait, err := rl.ReservePermission(1)
				if tc.ok {
					require.NoError(t, err)
					assert.Equal(t, 700*time.Millisecond, wait)
				} else {
					assert.ErrorIs(t, err, ratelimiter.ErrRequestNotPermitted)
					assert.Zero(t, wait)
				}
			})
		})
	}
}

func TestNoWaitRefusesEvenOneNanosecondBeforeTheNextCycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 1, time.Second, ratelimiter.NoWait)
		time.Sleep(time.Second - 1)
		require.NoError(t, rl.AcquirePermission(t.Context(), 1))
		assert.ErrorIs(t, rl.AcquirePermission(t.Context(), 1), ratelimiter.ErrRequestNotPermitted)
		time.Sleep(1)
		assert.NoError(t, rl.AcquirePermission(t.Context(), 1))
	})
}

func TestMultiplePermitsSpanTwoCycles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 3, time.Second, 5*time.Second)
		require.NoError(t, rl.AcquirePermission(t.Context(), 2))
		// Slots 2 (cycle 0) and 3, 4 (cycle 1): the caller waits for cycle 1, Resilience4j's
		// fullCycles = ⌈(3 − (1 + 3))/3⌉ = 0 plus the rest of cycle 0.
		start := time.Now()
		require.NoError(t, rl.AcquirePermission(t.Context(), 3))
		assert.Equal(t, time.Second, time.Since(start))
		assert.Equal(t, 1, available(rl), "cycle 1 keeps one permission")
	})
}

func TestRequestAboveTheLimitIsAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 3, time.Second, 5*time.Second)
		events := record(t, rl)
		for _, n := range []int{0, -1, 4, 1 << 40} {
			err := rl.AcquirePermission(t.Context(), n)
			assert.ErrorIs(t, err, ratelimiter.ErrInvalidPermits, "n=%d", n)
			assert.False(t, levee.IsRejection(err))
			_, err = rl.ReservePermission(n)
			assert.ErrorIs(t, err, ratelimiter.ErrInvalidPermits, "n=%d", n)
		}
		assert.EqualError(t, rl.AcquirePermission(t.Context(), 4),
			"ratelimiter: invalid number of permits: asked for 4, must be in [1, 3] (LimitForPeriod)")
		assert.Equal(t, 3, available(rl), "nothing taken")
		assert.Empty(t, events.take(), "a programming error is not an acquisition event")
	})
}

func TestAcquireWithEndedContextTakesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 3, time.Second, 5*time.Second)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		assert.ErrorIs(t, rl.AcquirePermission(ctx, 1), context.Canceled)
		assert.Equal(t, 3, available(rl))
	})
}

func TestAcquireHonoursContextCancellation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 1, time.Second, 5*time.Second)
		require.NoError(t, rl.AcquirePermission(t.Context(), 1))
		ctx, cancel := cancelAfter(t.Context(), 400*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := rl.AcquirePermission(ctx, 1)
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, 400*time.Millisecond, time.Since(start))
		assert.Equal(t, ratelimiter.Metrics{AvailablePermissions: 0, NanosToWait: 600 * time.Millisecond}, rl.Metrics())
	})
}

// A wait that would end at or after the context's deadline is refused at once: the caller could
// not use the permission, and its reservation might not be returnable by then.
func TestAcquireRefusesAWaitBeyondTheContextDeadline(t *testing.T) {
	for _, tc := range []struct {
		deadline time.Duration
		ok       bool
	}{
		{400 * time.Millisecond, false},
		{time.Second, false},
		{time.Second + 1, true},
		{time.Hour, true},
	} {
		t.Run(tc.deadline.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rl := newLimiter(t, 1, time.Second, 5*time.Second)
				require.NoError(t, rl.AcquirePermission(t.Context(), 1))
				ctx, cancel := context.WithTimeout(t.Context(), tc.deadline)
				defer cancel()
				start := time.Now()
				err := rl.AcquirePermission(ctx, 1)
				if tc.ok {
					require.NoError(t, err)
					assert.Equal(t, time.Second, time.Since(start))
					return
				}
				assert.ErrorIs(t, err, ratelimiter.ErrRequestNotPermitted)
				assert.Zero(t, time.Since(start))
				assert.Equal(t, 0, available(rl), "nothing reserved")
			})
		})
	}
}

func TestAcquireWithADeadlineTakesAFreePermission(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 1, time.Second, 5*time.Second)
		ctx, cancel := context.WithTimeout(t.Context(), time.Nanosecond)
		defer cancel()
		require.NoError(t, rl.AcquirePermission(ctx, 1), "no wait, so the deadline does not matter")
	})
}

func TestNilContextIsBackground(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 1, time.Second, 5*time.Second)
		var ctx context.Context // nil
		require.NoError(t, rl.AcquirePermission(ctx, 1))
		start := time.Now()
		require.NoError(t, rl.AcquirePermission(ctx, 1))
		assert.Equal(t, time.Second, time.Since(start))
	})
}

func TestNilRateLimiterReturnsErrors(t *testing.T) {
	var rl *ratelimiter.RateLimiter
	assert.ErrorIs(t, rl.AcquirePermission(t.Context(), 1), ratelimiter.ErrNilRateLimiter)
	_, err := rl.ReservePermission(1)
	assert.ErrorIs(t, err, ratelimiter.ErrNilRateLimiter)
	assert.ErrorIs(t, rl.ChangeLimitForPeriod(1), ratelimiter.ErrNilRateLimiter)
	assert.ErrorIs(t, rl.ChangeTimeoutDuration(1), ratelimiter.ErrNilRateLimiter)
	assert.NotPanics(t, func() {
		rl.DrainPermissions()
		rl.OnResult(1)
		rl.OnError(errors.New("x"))
		rl.Subscribe(func(ratelimiter.Event) {})()
	})
	assert.Equal(t, "", rl.Name())
	assert.Equal(t, ratelimiter.Config{}, rl.Config())
	assert.Equal(t, ratelimiter.Metrics{}, rl.Metrics())
}

// A spell of contention ends with the first acquire whose clock reading is past it, and the
// acquires during it take exactly the permissions of the cycle.
func TestContentionSpellEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl, err := ratelimiter.New("spell", ratelimiter.Config{LimitForPeriod: 2,
			LimitRefreshPeriod: time.Hour, TimeoutDuration: ratelimiter.NoWait})
		require.NoError(t, err)
		ratelimiter.StartContentionSpell(rl)
		require.NoError(t, rl.AcquirePermission(context.Background(), 1))
		assert.True(t, ratelimiter.InContentionSpell(rl), "still within the spell")
		time.Sleep(ratelimiter.ContentionSpell)
		require.NoError(t, rl.AcquirePermission(context.Background(), 1))
		assert.False(t, ratelimiter.InContentionSpell(rl), "the acquire at the end of the spell ended it")
		assert.ErrorIs(t, rl.AcquirePermission(context.Background(), 1), ratelimiter.ErrRequestNotPermitted)
		assert.Equal(t, 0, rl.Metrics().AvailablePermissions)
	})
}
