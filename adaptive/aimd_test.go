package adaptive_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/adaptive"
)

func acquire(t *testing.T, l *adaptive.Limiter) adaptive.Permit {
	t.Helper()
	p, err := l.Acquire(context.Background())
	require.NoError(t, err)
	return p
}

// AIMD adds 1/limit per call while half the limit is in use (1 per round trip of the full
// limit), multiplies by BackoffRatio on a drop or a call slower than Timeout, and moves once
// per round: calls taken under an older limit do not move it again.
func TestAIMD(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, err := adaptive.New("aimd", adaptive.Config{
			Algorithm: adaptive.AIMD, InitialLimit: 4, MinLimit: 2, MaxLimit: 5, Timeout: time.Second,
		})
		require.NoError(t, err)
		estimate := func() float64 { return l.AlgorithmMetrics().Estimate }
		round := func() []adaptive.Permit {
			ps := make([]adaptive.Permit, 4)
			for i := range ps {
				ps[i] = acquire(t, l)
			}
			return ps
		}
		ps := round()
		for i := 3; i >= 0; i-- {
			ps[i].OnSuccess() // taken with 4, 3, 2 and 1 in flight of 4
		}
		assert.InDelta(t, 4+1/4.0+1/4.25+1/(4.25+1/4.25), estimate(), 1e-9, "the call taken with 1 in flight of 4 adds nothing")
		assert.Equal(t, 4, l.Metrics().Limit)

		ps = round()
		ps[3].OnSuccess()
		ps[2].OnSuccess() // 5.12: MaxLimit
		assert.Equal(t, 5.0, estimate())
		assert.Equal(t, 5, l.Metrics().Limit)
		ps[1].OnSuccess()
		ps[0].OnDropped() // taken under the limit of 4: counted, not applied
		assert.Equal(t, 5.0, estimate())

		old, d := acquire(t, l), acquire(t, l)
		d.OnDropped() // 5 × 0.9 = 4.5
		assert.Equal(t, 4.5, estimate())
		assert.Equal(t, 4, l.Metrics().Limit)
		old.OnDropped() // an older round: counted, not applied
		assert.Equal(t, 4.5, estimate())

		slow := acquire(t, l)
		time.Sleep(1001 * time.Millisecond)
		slow.OnSuccess() // slower than Timeout: 4.5 × 0.9, the same round still
		assert.InDelta(t, 4.05, estimate(), 1e-9)
		assert.Equal(t, 4, l.Metrics().Limit)

		for range 20 {
			p := acquire(t, l)
			p.OnDropped()
		}
		assert.Equal(t, adaptive.Metrics{
			Limit: 2, Permitted: 31, Dropped: 23, NoLoadLatency: 1001 * time.Millisecond,
		}, l.Metrics(), "MinLimit; the slow call is the only one that took time")
	})
}

// Vegas averages a window of limit calls taken under the current limit, then grows while no
// call queues at the dependency, holds between Alpha and Beta queued calls, shrinks beyond,
// and shrinks at once on a drop.
func TestVegasSteps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, err := adaptive.New("vegas", adaptive.Config{InitialLimit: 4})
		require.NoError(t, err)
		// run takes n permits, waits for each latency in turn, ends the permits in order.
		run := func(n int, latencies ...time.Duration) {
			ps := make([]adaptive.Permit, n)
			for i := range ps {
				ps[i] = acquire(t, l)
			}
			for i, d := range latencies {
				time.Sleep(d)
				ps[i].OnSuccess()
			}
		}
		ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
		for range 4 {
			run(1, ms(10)) // 1 in flight of 4: the caller is the bottleneck
		}
		assert.Equal(t, 4, l.Metrics().Limit)
		assert.Equal(t, 10*time.Millisecond, l.Metrics().NoLoadLatency)
		run(4, ms(10), 0, 0, 0) // 10 ms each, 4 in flight: queue 0 < 1, grow
		assert.Equal(t, 5, l.Metrics().Limit)
		run(5, ms(10), ms(5), 0, 0, 0) // 10, 15, 15, 15, 15 ms: average 14, queue 5 × 4/14 = 1.43, hold
		assert.Equal(t, 5, l.Metrics().Limit)
		run(5, ms(20), 0, 0, 0, 0) // 20 ms: queue 5 × 10/20 = 2.5 > 2, shrink
		assert.Equal(t, 4, l.Metrics().Limit)
		run(4, ms(10), ms(2.5), 0, 0) // 10 and 3 × 12.5 ms: average 11.875, queue 4 × 1.875/11.875 = 0.63, grow
		assert.Equal(t, 5, l.Metrics().Limit)
		p := acquire(t, l)
		p.OnDropped() // at once
		assert.Equal(t, 4, l.Metrics().Limit)
		assert.Equal(t, uint64(1), l.Metrics().Dropped)
		assert.Zero(t, l.Metrics().InFlight)
	})
}
