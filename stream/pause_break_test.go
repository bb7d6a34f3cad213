package stream_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/stream"
)

// maxWait equal to the rate limiter's wait: the limiter may permit again exactly when the bound
// is reached, so the held element has not been held past maxWait and its retry is made, every
// time (a tie between the two timers must not be decided by chance).
func TestPauseWhileOpenMaxWaitEqualToRetryAfter(t *testing.T) {
	for range 50 {
		synctest.Test(t, func(t *testing.T) {
			rl := newRateLimiter(t, ratelimiter.Config{LimitForPeriod: 1, LimitRefreshPeriod: time.Second,
				TimeoutDuration: ratelimiter.NoWait})
			p := levee.Compose[int]().WithRateLimiter(rl)
			out, err := stream.Map(t.Context(), feed(t.Context(), count(2)...), p,
				func(_ context.Context, v int) (int, error) { return v * 10, nil }, stream.PauseWhileOpen(time.Second))
			require.NoError(t, err)
			rs := drain(out)
			require.Equal(t, []int{0, 1}, indexes(rs))
			require.NoError(t, rs[1].Err)
			assert.Equal(t, []int{0, 10}, values(rs))
			assert.Equal(t, map[int]time.Duration{1: time.Second}, pausedOf(rs))
		})
	}
}
