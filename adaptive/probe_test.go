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

// slowerForGood runs 64 callers for 30 s against a dependency whose unloaded latency is 10 ms
// for 10 s and 20 ms from then on (its knee stays at 8), and returns the limit and the
// no-load latency read every 100 ms of the last 10 s.
func slowerForGood(t *testing.T, cfg adaptive.Config) (limits []int, noLoads []time.Duration) {
	cfg.MaxQueued, cfg.MaxWaitDuration = 64, time.Hour
	l, err := adaptive.New("dependency", cfg)
	require.NoError(t, err)
	dep := &overloaded{knee: 8, base: 10 * time.Millisecond}
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(10 * time.Second)
		dep.mu.Lock()
		dep.base = 20 * time.Millisecond
		dep.mu.Unlock()
		time.Sleep(10 * time.Second)
		for range 100 {
			m := l.Metrics()
			limits = append(limits, m.Limit)
			noLoads = append(noLoads, m.NoLoadLatency)
			time.Sleep(100 * time.Millisecond)
		}
	}()
	simulate(t, l, dep, 64, 0, 30*time.Second)
	<-done
	return limits, noLoads
}

// A dependency that became slower for good: without a probe, Vegas keeps the 10 ms baseline
// and takes the new 20 ms for queueing, so the limit collapses far below the capacity of 8;
// with a probe every 5 s, the baseline is re-measured at 20 ms and the limit returns to 9.
func TestVegasProbeFollowsADependencyThatBecameSlower(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		limits, noLoads := slowerForGood(t, adaptive.Config{ProbeInterval: adaptive.NoProbe})
		assert.Equal(t, []time.Duration{10 * time.Millisecond}, slices.Compact(noLoads))
		assert.LessOrEqual(t, slices.Max(limits), 4, "%v", limits)
	})
	synctest.Test(t, func(t *testing.T) {
		limits, noLoads := slowerForGood(t, adaptive.Config{ProbeInterval: 5 * time.Second, ProbeSamples: 20})
		assert.Equal(t, []time.Duration{20 * time.Millisecond}, slices.Compact(noLoads))
		sorted := slices.Sorted(slices.Values(limits))
		assert.Equal(t, 9, sorted[len(sorted)/2], "median: %v", limits)
		assert.Equal(t, 3, sorted[0], "the probes run at ProbeLimit 3")
		assert.LessOrEqual(t, sorted[len(sorted)-1], 10)
	})
}

// In an incident the probe measures the incident: LatencyCeiling keeps the baseline where the
// user says the dependency is healthy, so the limit keeps shedding.
func TestLatencyCeilingStopsTheBaselineDrifting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		limits, noLoads := slowerForGood(t, adaptive.Config{
			ProbeInterval: 5 * time.Second, ProbeSamples: 20, LatencyCeiling: 12 * time.Millisecond,
		})
		assert.Equal(t, []time.Duration{12 * time.Millisecond}, slices.Compact(noLoads))
		assert.LessOrEqual(t, slices.Max(limits), 4, "%v", limits)
	})
}
