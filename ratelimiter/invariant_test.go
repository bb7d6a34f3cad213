package ratelimiter_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/levee-go/levee/ratelimiter"
)

// admissions records the cycle in which each admitted caller proceeds.
type admissions struct {
	mu       sync.Mutex
	created  time.Time
	period   time.Duration
	callers  map[int64]int
	permits  map[int64]int
	refused  int
	canceled int
}

func newAdmissions(period time.Duration) *admissions {
	return &admissions{created: time.Now(), period: period, callers: map[int64]int{}, permits: map[int64]int{}}
}

// acquire runs AcquirePermission and records its outcome.
func (a *admissions) acquire(ctx context.Context, rl *ratelimiter.RateLimiter, n int) {
	err := rl.AcquirePermission(ctx, n)
	cycle := int64(time.Since(a.created) / a.period)
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case err == nil:
		a.callers[cycle]++
		a.permits[cycle] += n
	case errors.Is(err, ratelimiter.ErrRequestNotPermitted):
		a.refused++
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		a.canceled++
	default:
		panic(err)
	}
}

// With 3 permissions per cycle and many callers reserving several cycles ahead, no cycle ever
// admits more than 3.
func TestNoCycleAdmitsMoreThanItsLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 3, time.Second, 10*time.Second)
		a := newAdmissions(time.Second)
		var wg sync.WaitGroup
		for range 40 {
			wg.Go(func() { a.acquire(t.Context(), rl, 1) })
		}
		wg.Wait()
		want := map[int64]int{}
		for c := range int64(11) { // cycles 0 to 10: the wait for cycle 10 is exactly the timeout
			want[c] = 3
		}
		assert.Equal(t, want, a.callers)
		assert.Equal(t, 7, a.refused)

		// Callers that give up while waiting, before, among and after others.
		a = newAdmissions(time.Second)
		for i := range 40 {
			wg.Go(func() {
				ctx, cancel := cancelAfter(t.Context(), time.Duration(i%7)*700*time.Millisecond)
				defer cancel()
				if i%7 == 0 {
					ctx = t.Context()
				}
				a.acquire(ctx, rl, 1)
			})
			if i%10 == 9 {
				time.Sleep(1500 * time.Millisecond)
			}
		}
		wg.Wait()
		for c, n := range a.callers {
			assert.LessOrEqual(t, n, 3, "cycle %d", c)
		}
		assert.Positive(t, a.canceled)
		assert.Equal(t, 40, sum(a.callers)+a.refused+a.canceled)
	})
}

func sum(m map[int64]int) int {
	total := 0
	for _, n := range m {
		total += n
	}
	return total
}

// The same invariant under random arrivals, permit counts, cancellations and time.
func TestNoCycleAdmitsMoreThanItsLimitUnderRandomLoad(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		rapid.SyncTest(rt, func(rt *rapid.T) {
			const limit = 3
			rl, err := ratelimiter.New("invariant", ratelimiter.Config{LimitForPeriod: limit,
				LimitRefreshPeriod: time.Second, TimeoutDuration: 6 * time.Second})
			require.NoError(rt, err)
			single := rapid.Bool().Draw(rt, "single permits")
			a := newAdmissions(time.Second)
			var wg sync.WaitGroup
			var cancels []context.CancelFunc
			for range rapid.IntRange(1, 40).Draw(rt, "steps") {
				switch rapid.IntRange(0, 3).Draw(rt, "step") {
				case 0, 1:
					n := 1
					if !single {
						n = rapid.IntRange(1, limit).Draw(rt, "n")
					}
					ctx, cancel := context.WithCancel(context.Background())
					cancels = append(cancels, cancel)
					for range rapid.IntRange(1, 6).Draw(rt, "callers") {
						wg.Go(func() { a.acquire(ctx, rl, n) })
					}
					synctest.Wait()
				case 2:
					time.Sleep(rapid.SampledFrom([]time.Duration{time.Nanosecond, 300 * time.Millisecond,
						time.Second, 2700 * time.Millisecond}).Draw(rt, "advance"))
				case 3:
					if len(cancels) > 0 {
						cancels[rapid.IntRange(0, len(cancels)-1).Draw(rt, "cancel")]()
						synctest.Wait()
					}
				}
			}
			wg.Wait()
			for _, cancel := range cancels {
				cancel()
			}
			for c, n := range a.callers {
				if n > limit {
					rt.Fatalf("cycle %d admitted %d callers", c, n)
				}
				if single && a.permits[c] > limit {
					rt.Fatalf("cycle %d admitted %d permits", c, a.permits[c])
				}
			}
		})
	})
}

// TestPropertyNegativeTimeoutsOtherThanNoWaitAreRefused: NoWait is the only negative
// TimeoutDuration New and ChangeTimeoutDuration accept; any other, −1 included, is
// refused naming the field, its range and the constant.
func TestPropertyNegativeTimeoutsOtherThanNoWaitAreRefused(t *testing.T) {
	rl, err := ratelimiter.New("r", ratelimiter.Config{TimeoutDuration: ratelimiter.NoWait})
	require.NoError(t, err)
	rapid.Check(t, func(t *rapid.T) {
		d := time.Duration(rapid.OneOf(rapid.Just(int64(-1)), rapid.Int64Range(int64(ratelimiter.NoWait)+1, -1)).Draw(t, "d"))
		want := "ratelimiter: TimeoutDuration must be >= 0 or NoWait, got " + d.String()
		_, err := ratelimiter.New("r", ratelimiter.Config{TimeoutDuration: d})
		require.EqualError(t, err, want)
		require.EqualError(t, rl.ChangeTimeoutDuration(d), want)
		require.Equal(t, ratelimiter.NoWait, rl.Config().TimeoutDuration)
	})
	assert.Equal(t, ratelimiter.NoWait, rl.Config().TimeoutDuration)
}
