package ratelimiter

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustNew(t *testing.T, limit int, period, timeout time.Duration) *RateLimiter {
	t.Helper()
	rl, err := New("internal", Config{LimitForPeriod: limit, LimitRefreshPeriod: period, TimeoutDuration: timeout})
	require.NoError(t, err)
	return rl
}

func (rl *RateLimiter) cursor() (gen uint64, u int64) {
	w := rl.state.Load()
	return w >> slotBits, int64(w & slotMask)
}

func TestWaitForNeverOverflows(t *testing.T) {
	const p62 = int64(1) << 62
	for _, tc := range []struct {
		dk, r, period, timeout int64
		wait                   int64
		ok                     bool
	}{
		{1, 0, 10, 10, 10, true},
		{1, 3, 10, 7, 7, true},
		{1, 3, 10, 6, 0, false},
		{2, 3, 10, 17, 17, true},
		{2, 3, 10, 16, 0, false},
		{3, 0, 10, 17, 0, false},
		{1, 9, 10, 0, 0, false},
		{2, 0, p62, math.MaxInt64, 0, false}, // 2⁶³ does not fit
		{2, 1, p62, math.MaxInt64, math.MaxInt64, true},
		{math.MaxInt64, 0, 1, math.MaxInt64, math.MaxInt64, true},
		{math.MaxInt64, 0, 2, math.MaxInt64, 0, false},
		{math.MaxInt64 / 2, 0, 2, math.MaxInt64, math.MaxInt64 - 1, true},
	} {
		wait, ok := waitFor(tc.dk, tc.r, tc.period, tc.timeout)
		assert.Equal(t, tc.ok, ok, "%+v", tc)
		assert.Equal(t, tc.wait, wait, "%+v", tc)
	}
}

func TestArithmeticHelpers(t *testing.T) {
	assert.Equal(t, int64(-1), floorDiv(-1, 3))
	assert.Equal(t, int64(-1), floorDiv(-3, 3))
	assert.Equal(t, int64(-2), floorDiv(-4, 3))
	assert.Equal(t, int64(1), floorDiv(5, 3))
	assert.Equal(t, int64(math.MaxInt64), satMul(1<<32, 1<<32))
	assert.Equal(t, int64(1<<62), satMul(1<<31, 1<<31))
	assert.Equal(t, int64(0), satMul(0, math.MaxInt64))
}

// At the highest rate allowed, slot numbers reach rebaseAt after 2¹⁶ cycles of 1ns.
func TestRebaseWhenTimeMovesSlotNumbersTooFar(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const limit = 1 << 39
		rl := mustNew(t, limit, time.Nanosecond, NoWait)
		dmax := rl.epoch.Load().dmax
		require.Equal(t, int64(1<<16), dmax)

		time.Sleep(time.Duration(dmax))
		require.NoError(t, rl.AcquirePermission(t.Context(), 5))
		gen, u := rl.cursor()
		assert.Equal(t, uint64(0), gen, "start(dmax) is still within rebaseAt")
		assert.Equal(t, dmax*limit+5, u)

		time.Sleep(1)
		assert.Equal(t, Metrics{AvailablePermissions: limit, Cycle: dmax + 1}, rl.Metrics())
		gen, u = rl.cursor()
		assert.Equal(t, uint64(1), gen)
		assert.Equal(t, int64(0), u)
		e := rl.epoch.Load()
		assert.Equal(t, &epoch{gen: 1, limit: limit, cycle0: dmax + 1, slot0: 0, dmax: dmax}, e)

		require.NoError(t, rl.AcquirePermission(t.Context(), limit-1))
		assert.Equal(t, 1, rl.Metrics().AvailablePermissions)
	})
}

// Reservations push the cursor past rebaseAt before time does: the next request re-bases, and
// the reservations keep their cycles.
func TestRebaseKeepsReservations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const limit = 1 << 30 // with 1000ns of timeout: 2³⁰ × 1002 ≤ 2⁴⁰
		rl := mustNew(t, limit, time.Nanosecond, 1000*time.Nanosecond)
		dmax := rl.epoch.Load().dmax
		require.Equal(t, int64(1<<25), dmax)

		time.Sleep(time.Duration(dmax - 1))
		require.NoError(t, rl.AcquirePermission(t.Context(), limit)) // the cursor reaches rebaseAt
		for i := range int64(3) {
			wait, err := rl.ReservePermission(limit)
			require.NoError(t, err)
			assert.Equal(t, time.Duration(i+1), wait)
		}
		gen, u := rl.cursor()
		assert.Equal(t, uint64(1), gen, "re-based by the second reservation")
		assert.Equal(t, dmax-1, rl.epoch.Load().cycle0)
		assert.Equal(t, int64(4*limit), u, "cycles dmax-1 to dmax+2 taken, renumbered from 0")
		assert.Equal(t, Metrics{AvailablePermissions: -3 * limit, NanosToWait: 4, Cycle: dmax - 1}, rl.Metrics())

		time.Sleep(2)
		assert.Equal(t, Metrics{AvailablePermissions: -limit, NanosToWait: 2, Cycle: dmax + 1}, rl.Metrics())
		wait, err := rl.ReservePermission(1)
		require.NoError(t, err)
		assert.Equal(t, time.Duration(2), wait)
	})
}

func TestRebaseWhenReservationsPassRebaseAt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := mustNew(t, 10, time.Second, 5*time.Second)
		rl.epoch.Store(newEpoch(10, 0, rebaseAt-3, nil))
		rl.state.Store(uint64(rebaseAt + 1)) // 4 of cycle 0 taken
		assert.Equal(t, Metrics{AvailablePermissions: 6}, rl.Metrics())
		gen, u := rl.cursor()
		assert.Equal(t, uint64(1), gen)
		assert.Equal(t, int64(4), u)
	})
}

// Before the cycle a change of limit applies from, the old mapping is in prev and slot numbers
// may be above rebaseAt; they are bounded by the reservations, so no re-base is needed.
func TestNoRebaseBeforeAPendingLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := mustNew(t, 2, time.Second, 10*time.Second)
		old := newEpoch(2, 0, rebaseAt-8, nil)
		rl.epoch.Store(newEpoch(3, 5, rebaseAt+2, old))
		rl.state.Store(uint64(rebaseAt + 1)) // cycles 0–3 full, 1 of cycle 4 taken
		assert.Equal(t, Metrics{AvailablePermissions: -7, NanosToWait: 4 * time.Second}, rl.Metrics())
		wait, err := rl.ReservePermission(2) // the rest of cycle 4, then one of cycle 5 (limit 3)
		require.NoError(t, err)
		assert.Equal(t, 5*time.Second, wait)
		gen, _ := rl.cursor()
		assert.Equal(t, uint64(0), gen)
	})
}

func TestHistoryKeepsOnlyTheEpochsStillNeeded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := mustNew(t, 2, time.Second, 10*time.Second)
		require.NoError(t, rl.AcquirePermission(t.Context(), 2))
		for _, n := range []int{2, 2, 1} { // cycles 1 and 2 full, cycle 3: 1 of 2
			_, err := rl.ReservePermission(n)
			require.NoError(t, err)
		}
		require.NoError(t, rl.ChangeLimitForPeriod(3)) // from cycle 3, the last one reserved
		require.NoError(t, rl.ChangeLimitForPeriod(4)) // still from cycle 3
		e := rl.epoch.Load()
		assert.Equal(t, int64(3), e.cycle0)
		require.NotNil(t, e.prev)
		assert.Equal(t, int64(3), e.prev.cycle0, "the limit of 3 applied to no cycle")
		require.NotNil(t, e.prev.prev)
		assert.Nil(t, e.prev.prev.prev)

		time.Sleep(4 * time.Second)
		require.NoError(t, rl.ChangeLimitForPeriod(5)) // from cycle 5: the past is dropped
		e = rl.epoch.Load()
		assert.Equal(t, int64(5), e.cycle0)
		require.NotNil(t, e.prev)
		assert.Nil(t, e.prev.prev)
		assert.Equal(t, Metrics{AvailablePermissions: 4, Cycle: 4}, rl.Metrics())
	})
}

// A reader that finds the word's generation ahead of the epoch waits for the change to finish
// and then computes with the new epoch.
func TestReaderWaitsForAnEpochChangeInProgress(t *testing.T) {
	rl := mustNew(t, 4, time.Hour, NoWait)
	rl.mu.Lock()
	e := rl.epoch.Load()
	ne := newEpoch(7, 0, 0, nil) // as if the cycle had seven permissions
	ne.gen = 1
	rl.state.Store(1 << slotBits) // the word of generation 1, the epoch not yet stored

	var got atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() { got.Store(int64(rl.Metrics().AvailablePermissions)) })
	for range 1000 {
		assert.Equal(t, int64(0), got.Load(), "the reader must not use epoch %+v", e)
	}
	rl.epoch.Store(ne)
	rl.mu.Unlock()
	wg.Wait()
	assert.Equal(t, int64(7), got.Load())
}

// Many goroutines cross the re-base points together: every acquisition counts exactly once.
func TestConcurrentRebases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const limit = 1 << 39
		rl := mustNew(t, limit, time.Nanosecond, NoWait)
		var wg sync.WaitGroup
		var ok atomic.Int64
		for g := range 64 {
			wg.Go(func() {
				for i := range 50 {
					if rl.AcquirePermission(t.Context(), 1+g%3) == nil {
						ok.Add(int64(1 + g%3))
					}
					time.Sleep(time.Duration(1+(g*7+i*13)%40) * time.Microsecond)
				}
			})
		}
		wg.Wait()
		var want int64
		for g := range 64 {
			want += 50 * int64(1+g%3)
		}
		assert.Equal(t, want, ok.Load(), "no acquisition refused at this rate")
		gen, _ := rl.cursor()
		assert.NotZero(t, gen, "re-based along the way")
		require.NoError(t, rl.AcquirePermission(t.Context(), 3))
		m := rl.Metrics()
		assert.Equal(t, limit-3, m.AvailablePermissions)
	})
}
