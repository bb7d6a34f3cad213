package leveeredis_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/levee-go/levee/leveeredis"
	"github.com/levee-go/levee/ratelimiter"
)

// The shared limiter with the Cycles algorithm admits, reserves and refuses exactly as the core
// limiter with the same config on the same schedule, waits included, when the core limiter is
// created on a cycle boundary (the shared cycles are aligned on the Unix epoch).
func TestCyclesSameAsLocalLimiter(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		rapid.SyncTest(rt, func(rt *rapid.T) {
			m := startMini(rt)
			c := m.client(rt)
			limit := rapid.IntRange(1, 5).Draw(rt, "limit")
			period := time.Duration(rapid.IntRange(1, 5).Draw(rt, "periodMs")) * 10 * time.Millisecond
			timeout := time.Duration(rapid.IntRange(-1, 20).Draw(rt, "timeoutMs")) * 5 * time.Millisecond
			if timeout < 0 {
				timeout = ratelimiter.NoWait
			}
			time.Sleep(period - time.Duration(time.Now().UnixNano())%period) // a cycle boundary, on the bubble's clock
			synctest.Wait()
			local, err := ratelimiter.New("local", ratelimiter.Config{
				LimitForPeriod: limit, LimitRefreshPeriod: period, TimeoutDuration: timeout,
			})
			require.NoError(rt, err)
			shared, err := leveeredis.NewRateLimiter(c, "same", leveeredis.Config{
				LimitForPeriod: limit, LimitRefreshPeriod: period, TimeoutDuration: timeout,
				FallbackLimitForPeriod: 1,
			})
			require.NoError(rt, err)
			defer func() { _ = shared.Close() }()
			steps := rapid.IntRange(1, 30).Draw(rt, "steps")
			for i := range steps {
				time.Sleep(time.Duration(rapid.IntRange(0, 30).Draw(rt, "sleepMs")) * time.Millisecond)
				n := rapid.IntRange(1, limit).Draw(rt, "n")
				lw, lerr := local.ReservePermission(n)
				sw, serr := shared.ReservePermission(rt.Context(), n)
				require.Equal(rt, lerr != nil, serr != nil, "step %d: local %v, shared %v", i, lerr, serr)
				if serr == nil {
					require.Equal(rt, lw, sw, "step %d: wait", i)
					continue
				}
				require.ErrorIs(rt, serr, ratelimiter.ErrRequestNotPermitted)
				// A refusal says when to come back: the wait n permissions would have needed,
				// which for one permission is the core limiter's NanosToWait.
				if n == 1 {
					require.Equal(rt, local.Metrics().NanosToWait, sw, "step %d: refusal's wait", i)
				}
				require.Greater(rt, sw, max(timeout, 0), "step %d: refusal's wait", i)
				require.Equal(rt, local.Metrics().NanosToWait, shared.Metrics().NanosToWait, "step %d: NanosToWait", i)
			}
			require.Equal(rt, local.Metrics().AvailablePermissions, shared.Metrics().AvailablePermissions)
		})
	})
}
