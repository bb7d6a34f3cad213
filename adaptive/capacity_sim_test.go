package adaptive_test

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/adaptive"
)

// capacityRun drives 64 callers through l against the dependency of the simulation (10 ms up
// to knee concurrent calls, 10 ms × n / knee past it) whose knee is 8, halves to 4 at 60 s
// and is restored to 8 at 120 s. It returns the limit read every 100 ms of each phase and the
// latencies of all calls, sorted.
func capacityRun(t *testing.T, l *adaptive.Limiter) (phases [3][]int, latencies []time.Duration) {
	dep := &overloaded{knee: 8, base: 10 * time.Millisecond}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i, knee := range []int{8, 4, 8} {
			dep.mu.Lock()
			dep.knee = knee
			dep.mu.Unlock()
			for range 600 {
				phases[i] = append(phases[i], l.Metrics().Limit)
				time.Sleep(100 * time.Millisecond)
			}
		}
	}()
	_, latencies = simulate(t, l, dep, 64, 0, 180*time.Second)
	<-done
	return phases, latencies
}

// Every algorithm follows the capacity down when it halves at 60 s and up when it is restored
// at 120 s: from 10 s after each change to the next, Vegas and Gradient2 keep the limit within
// ±25 % of the capacity at every reading; AIMD's sawtooth reaches one call above it at the
// halved capacity (4, 5, 6, 5, 4: it grows until a call is slower than Timeout), and its
// median is the capacity plus one. Throughout, p99 latency stays within 2× the unloaded 10 ms.
//
// Gradient2 runs with Tolerance 1, QueueSize 1 and a LatencyCeiling of 10 ms: against a
// dependency whose latency grows in proportion to the calls past the knee, its long-term
// average follows the latency up and, uncapped, the limit grows without end (the drift the
// ceiling exists for); AIMD needs its Timeout at the unloaded latency.
func TestEveryAlgorithmFollowsTheCapacity(t *testing.T) {
	for _, tc := range []struct {
		cfg     adaptive.Config
		bounds  [3][2]int // min and max reading, 10 s after each change
		medians [3]int
		p99     time.Duration
	}{
		{adaptive.Config{}, [3][2]int{{9, 9}, {5, 5}, {9, 9}}, [3]int{9, 5, 9}, 12500 * time.Microsecond},
		{adaptive.Config{Alpha: 0.5, Beta: 1}, [3][2]int{{8, 9}, {4, 5}, {8, 9}}, [3]int{9, 5, 9}, 12500 * time.Microsecond},
		{adaptive.Config{Algorithm: adaptive.Gradient2, Tolerance: 1, QueueSize: 1, LatencyCeiling: 10 * time.Millisecond},
			[3][2]int{{9, 9}, {5, 5}, {9, 9}}, [3]int{9, 5, 9}, 12500 * time.Microsecond},
		{adaptive.Config{Algorithm: adaptive.AIMD, Timeout: 10 * time.Millisecond},
			[3][2]int{{8, 10}, {4, 6}, {8, 10}}, [3]int{9, 5, 9}, 15 * time.Millisecond},
	} {
		t.Run(tc.cfg.Algorithm.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := tc.cfg
				cfg.MaxQueued, cfg.MaxWaitDuration = 64, time.Hour
				l, err := adaptive.New("dependency", cfg)
				require.NoError(t, err)
				phases, latencies := capacityRun(t, l)
				for i, capacity := range []int{8, 4, 8} {
					require.Len(t, phases[i], 600)
					settled := phases[i][100:]
					assert.Equal(t, tc.bounds[i], [2]int{slices.Min(settled), slices.Max(settled)}, "phase %d", i)
					assert.Equal(t, tc.medians[i], slices.Sorted(slices.Values(settled))[len(settled)/2], "phase %d median", i)
					if tc.cfg.Algorithm != adaptive.AIMD {
						assert.GreaterOrEqual(t, slices.Min(settled)*4, capacity*3, "phase %d: within −25 %%", i)
						assert.LessOrEqual(t, slices.Max(settled)*4, capacity*5, "phase %d: within +25 %%", i)
					}
				}
				assert.Equal(t, tc.p99, percentile(latencies, 0.99))
				assert.LessOrEqual(t, percentile(latencies, 0.99), 20*time.Millisecond, "p99 within 2× unloaded")
				assert.Zero(t, l.Metrics().InFlight)
			})
		})
	}
}
