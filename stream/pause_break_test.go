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
	"github.com/levee-go/levee/circuitbreaker"
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

// A nil pipeline refuses nothing: a rejection the function itself returns (from a pattern it
// calls inside) is the element's error, not a refusal to wait out. Before, the element was held
// until ctx was done, as nothing could ever wake it.
func TestPauseWhileOpenNilPipelineFunctionReturnsRejection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var p *levee.Pipeline[int]
		out, err := stream.Map(t.Context(), feed(t.Context(), count(3)...), p,
			func(_ context.Context, v int) (int, error) {
				if v == 1 {
					return 0, ratelimiter.ErrRequestNotPermitted
				}
				return v * 10, nil
			}, stream.PauseWhileOpen(0))
		require.NoError(t, err)
		done := make(chan []stream.Result[int, int], 1)
		go func() { done <- drain(out) }()
		var rs []stream.Result[int, int]
		select {
		case rs = <-done:
		case <-time.After(time.Hour):
			t.Fatal("the element was held: the stream never ended")
		}
		require.Equal(t, []int{0, 1, 2}, indexes(rs))
		assert.ErrorIs(t, rs[1].Err, ratelimiter.ErrRequestNotPermitted)
		assert.Equal(t, []int{0, 0, 20}, values(rs))
		assert.Equal(t, map[int]time.Duration{}, pausedOf(rs))
		assert.Equal(t, time.Duration(0), time.Since(start))
	})
}

// A HALF_OPEN breaker with one probe: the probe's call ends with an ignored error, which gives
// its permission back without a transition. The element refused meanwhile (all probes out) is
// held; the permission given back must wake it, since nothing else will: no other call starts
// while it is held. Before, the stream stalled until ctx was done.
func TestPauseWhileOpenHalfOpenProbeIgnoredWakesHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errIgnored := errors.New("ignored")
		cb := newBreaker(t, circuitbreaker.Config{SlidingWindowSize: 2, MinimumNumberOfCalls: 2,
			PermittedNumberOfCallsInHalfOpenState: 1, IgnoreErrors: []error{errIgnored}})
		require.NoError(t, cb.TransitionToOpenState())
		require.NoError(t, cb.TransitionToHalfOpenState())
		p := levee.Compose[int]().WithCircuitBreaker(cb)
		start := time.Now()
		var calls atomic.Int32
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		out, err := stream.Map(ctx, feed(ctx, count(2)...), p,
			func(_ context.Context, v int) (int, error) {
				if calls.Add(1) == 1 {
					time.Sleep(time.Second)
					return 0, errIgnored
				}
				return v * 10, nil
			}, stream.PauseWhileOpen(0), stream.Concurrency(2))
		require.NoError(t, err)
		rs := drain(out)
		require.Equal(t, []int{0, 1}, indexes(rs))
		failed, live := 0, 0
		for _, r := range rs {
			if r.Err == nil {
				live++
				assert.Equal(t, r.In*10, r.Value)
				assert.Equal(t, time.Second, r.Paused)
			} else {
				failed++
				assert.ErrorIs(t, r.Err, errIgnored)
				assert.Equal(t, time.Duration(0), r.Paused)
			}
		}
		assert.Equal(t, 1, failed)
		assert.Equal(t, 1, live)
		assert.Equal(t, time.Second, time.Since(start))
	})
}
