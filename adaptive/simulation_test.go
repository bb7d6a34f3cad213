package adaptive_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/adaptive"
)

// overloaded is a dependency that answers in 10 ms up to knee concurrent calls and slows down
// linearly past it: 10 ms × inFlight / knee, inFlight counted as the call starts.
type overloaded struct {
	knee int
	base time.Duration

	mu        sync.Mutex
	inFlight  int
	from      time.Time // latencies of calls starting at or after from are kept
	latencies []time.Duration
}

func (d *overloaded) call(context.Context) (int, error) {
	d.mu.Lock()
	d.inFlight++
	n, knee, base := d.inFlight, d.knee, d.base
	d.mu.Unlock()
	latency := base
	if n > knee {
		latency = base * time.Duration(n) / time.Duration(knee)
	}
	start := time.Now()
	time.Sleep(latency)
	d.mu.Lock()
	d.inFlight--
	if !start.Before(d.from) {
		d.latencies = append(d.latencies, latency)
	}
	d.mu.Unlock()
	return n, nil
}

// simulation runs callers goroutines that call dep through l without pause for run, and
// returns the limit seen every 100 ms after warmup and the dependency's latencies (calls
// started after warmup), sorted.
func simulate(t *testing.T, l *adaptive.Limiter, dep *overloaded, callers int, warmup, run time.Duration) (limits []int, latencies []time.Duration) {
	start := time.Now()
	dep.from = start.Add(warmup)
	ctx, cancel := context.WithDeadline(context.Background(), start.Add(run))
	defer cancel()
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for ctx.Err() == nil {
				if _, err := adaptive.Execute(ctx, l, dep.call); err != nil && ctx.Err() == nil {
					t.Errorf("unexpected error %v", err)
					return
				}
			}
		})
	}
	time.Sleep(warmup)
	for time.Since(start) < run {
		limits = append(limits, l.Metrics().Limit)
		time.Sleep(100 * time.Millisecond)
	}
	wg.Wait()
	slices.Sort(dep.latencies)
	return limits, dep.latencies
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	return sorted[int(float64(len(sorted)-1)*p)]
}

func TestVegasSettlesAtTheKnee(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, err := adaptive.New("dependency", adaptive.Config{MaxQueued: 64, MaxWaitDuration: time.Hour})
		require.NoError(t, err)
		var changes []int
		defer l.Subscribe(func(e adaptive.Event) {
			if e.Type == adaptive.EventLimitChanged {
				changes = append(changes, e.Limit)
			}
		})()
		dep := &overloaded{knee: 8, base: 10 * time.Millisecond}
		limits, latencies := simulate(t, l, dep, 64, 2*time.Second, 10*time.Second)
		// Exact figures: the dependency answers in multiples of 1.25 ms, and every call starts
		// at an instant of the fake clock, so the run repeats itself.
		// Down from 20 to 9, then never out of 9 and 10.
		require.GreaterOrEqual(t, len(changes), 9)
		assert.Equal(t, []int{18, 17, 16, 14, 13, 12, 11, 10, 9}, changes[:9], "the descent from the initial 20")
		for _, n := range changes[9:] {
			assert.Contains(t, []int{9, 10}, n, "after the descent: %v", changes)
		}
		assert.Len(t, limits, 80)
		for _, n := range limits {
			assert.GreaterOrEqual(t, n, 6, "below 8 − 25 %%: %v", limits)
			assert.LessOrEqual(t, n, 10, "above 8 + 25 %%: %v", limits)
		}
		sorted := slices.Sorted(slices.Values(limits))
		assert.Equal(t, 9, sorted[len(sorted)/2], "median limit")
		assert.Equal(t, 11250*time.Microsecond, percentile(latencies, 0.5), "p50 latency: 9 in flight")
		assert.LessOrEqual(t, percentile(latencies, 0.99), 12500*time.Microsecond, "p99 latency: at most 10 in flight")
		assert.Less(t, percentile(latencies, 0.99), 2*dep.base, "p99 within 2× the unloaded latency")
		assert.Equal(t, 10*time.Millisecond, l.Metrics().NoLoadLatency)
		assert.Zero(t, l.Metrics().InFlight)
		assert.Zero(t, l.Metrics().Queued)
		assert.Zero(t, l.Metrics().Dropped)
		// Without the limiter the 64 callers would all be in flight: 80 ms per call.
		assert.Greater(t, len(latencies), 6000, "8 s at 9 calls per 11.25 ms is 6400 calls")
	})
}

// The same load through a fixed limit of 64, that is without a limiter: every call queues at
// the dependency, which answers in 80 ms, 8× its unloaded latency.
func TestWithoutAdaptationTheDependencyQueues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, err := adaptive.New("dependency", adaptive.Config{InitialLimit: 64, MinLimit: 64, MaxLimit: 64})
		require.NoError(t, err)
		dep := &overloaded{knee: 8, base: 10 * time.Millisecond}
		limits, latencies := simulate(t, l, dep, 64, 2*time.Second, 10*time.Second)
		assert.Equal(t, 64, slices.Min(limits))
		assert.Equal(t, 80*time.Millisecond, percentile(latencies, 0.5))
		assert.Equal(t, 80*time.Millisecond, percentile(latencies, 0.99))
		// 8 s at 64 calls per 80 ms is 6400 calls: the limit of 9 loses no throughput.
		assert.InDelta(t, 6400, len(latencies), 64)
	})
}

// The limit follows the dependency's capacity both ways: up when it scales out to 16
// concurrent calls, down again when it falls back to 8. Each phase lasts 2 s; the limit is
// read every 100 ms of the second half of each.
func TestVegasFollowsTheCapacity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, err := adaptive.New("dependency", adaptive.Config{MaxQueued: 64, MaxWaitDuration: time.Hour})
		require.NoError(t, err)
		dep := &overloaded{knee: 8, base: 10 * time.Millisecond}
		phases := [][]int{nil, nil, nil}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i, knee := range []int{8, 16, 8} {
				dep.mu.Lock()
				dep.knee = knee
				dep.mu.Unlock()
				time.Sleep(time.Second)
				for range 10 {
					phases[i] = append(phases[i], l.Metrics().Limit)
					time.Sleep(100 * time.Millisecond)
				}
			}
		}()
		simulate(t, l, dep, 64, 0, 6*time.Second+time.Millisecond)
		<-done
		// At 8 the limit is 9 or 10 (one or two calls queued at the dependency); at 16 it
		// moves between 17 and 20: 18 calls queue 18 × 1.25 / 11.25 = 2, within Alpha and Beta
		// times log10(18) = 1.26 and 2.51. Both within 25 % of the capacity.
		for i, bounds := range [][2]int{{9, 10}, {17, 20}, {9, 10}} {
			require.Len(t, phases[i], 10)
			assert.GreaterOrEqual(t, slices.Min(phases[i]), bounds[0], "phase %d: %v", i, phases[i])
			assert.LessOrEqual(t, slices.Max(phases[i]), bounds[1], "phase %d: %v", i, phases[i])
		}
	})
}
