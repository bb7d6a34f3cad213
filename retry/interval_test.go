package retry_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/levee-go/levee/retry"
)

const (
	ms = time.Millisecond
	us = time.Microsecond

	longest = time.Duration(math.MaxInt64)
)

func sequence(f retry.IntervalFunction, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = f(i + 1)
	}
	return out
}

func TestExponentialBackoffSequences(t *testing.T) {
	tests := []struct {
		name       string
		initial    time.Duration
		multiplier float64
		max        time.Duration
		want       []time.Duration
	}{
		// Resilience4j's whole milliseconds would give 4ms every time: trunc(4 × 1.2) = 4.
		{"grows below a millisecond step", 4 * ms, 1.2, 0,
			[]time.Duration{4 * ms, 4800 * us, 5760 * us, 6912 * us, 8294400 * time.Nanosecond}},
		// Resilience4j: 500, 750, 1125, 1687, 2530ms.
		{"Resilience4j's example, unrounded", 500 * ms, 1.5, 0,
			[]time.Duration{500 * ms, 750 * ms, 1125 * ms, 1687500 * us, 2531250 * us}},
		{"scenario 2", 100 * ms, 2, 0, []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms}},
		{"sub-millisecond initial kept", 1500 * us, 2, 0, []time.Duration{1500 * us, 3 * ms, 6 * ms}},
		{"one nanosecond", time.Nanosecond, 1.5, 0, []time.Duration{1, 2, 2, 3, 5}}, // 1, 1.5, 2.25, 3.375, 5.0625 rounded
		{"multiplier 1 is constant", 200 * ms, 1, 0, []time.Duration{200 * ms, 200 * ms, 200 * ms}},
		{"capped", 500 * ms, 1.5, time.Second, []time.Duration{500 * ms, 750 * ms, time.Second, time.Second, time.Second}},
		{"cap equal to initial", 300 * ms, 2, 300 * ms, []time.Duration{300 * ms, 300 * ms, 300 * ms}},
		{"cap between steps", 4 * ms, 1.2, 5 * ms, []time.Duration{4 * ms, 4800 * us, 5 * ms, 5 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := retry.ExponentialBackoff(tt.initial, tt.multiplier, tt.max)
			require.NoError(t, err)
			assert.Equal(t, tt.want, sequence(f, len(tt.want)))
		})
	}
}

func TestExponentialBackoffSaturates(t *testing.T) {
	f, err := retry.ExponentialBackoff(ms, 10, 0)
	require.NoError(t, err)
	assert.Equal(t, 10*ms, f(2))
	assert.Equal(t, 1000*time.Second, f(7))
	assert.Equal(t, longest, f(17)) // 10^19 ns is past the largest Duration (about 9.2·10^18 ns)
	assert.Equal(t, longest, f(100))
	assert.Equal(t, longest, f(math.MaxInt)) // the power is +Inf: still the largest Duration
	g, err := retry.ExponentialBackoff(longest, 2, 0)
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{longest, longest}, sequence(g, 2))
}

func TestExponentialBackoffHugeAttempt(t *testing.T) {
	f, err := retry.ExponentialBackoff(7*ms, 1, 0)
	require.NoError(t, err)
	assert.Equal(t, 7*ms, f(math.MaxInt))
	g, err := retry.ExponentialBackoff(ms, 3, time.Second)
	require.NoError(t, err)
	assert.Equal(t, time.Second, g(math.MaxInt))
	h, err := retry.ExponentialBackoff(ms, 1.0000001, 0)
	require.NoError(t, err)
	assert.Equal(t, longest, h(math.MaxInt))
}

func TestIntervalAttemptBelowOneIsFirst(t *testing.T) {
	f, err := retry.ExponentialBackoff(100*ms, 2, 0)
	require.NoError(t, err)
	assert.Equal(t, 100*ms, f(0))
	assert.Equal(t, 100*ms, f(-5))
	assert.Equal(t, 100*ms, f(math.MinInt))
	g, err := retry.ExponentialRandomBackoff(100*ms, 2, 0, 0, nil)
	require.NoError(t, err)
	assert.Equal(t, 100*ms, g(-1))
}

func TestFixedInterval(t *testing.T) {
	f, err := retry.FixedInterval(250 * ms)
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{250 * ms, 250 * ms, 250 * ms}, sequence(f, 3))
	g, err := retry.FixedInterval(1999 * us)
	require.NoError(t, err)
	assert.Equal(t, 1999*us, g(1), "not truncated to 1ms")
	h, err := retry.FixedInterval(time.Nanosecond)
	require.NoError(t, err)
	assert.Equal(t, time.Nanosecond, h(1))
}

func TestRandomizedIntervalFactorZeroIsExact(t *testing.T) {
	f, err := retry.RandomizedInterval(1500*us, 0, nil)
	require.NoError(t, err)
	for i := range 1000 {
		require.Equal(t, 1500*us, f(i+1))
	}
	g, err := retry.ExponentialRandomBackoff(100*ms, 2, 0, 0, nil)
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{100 * ms, 200 * ms, 400 * ms}, sequence(g, 3))
}

// TestRandomizedIntervalSpreadsOverTheRange: the real source spreads 1s ± 50% over
// [500ms, 1500ms] to the nanosecond, not to whole milliseconds.
func TestRandomizedIntervalSpreadsOverTheRange(t *testing.T) {
	f, err := retry.RandomizedInterval(time.Second, 0.5, nil)
	require.NoError(t, err)
	lo, hi := longest, time.Duration(0)
	subMillisecond := 0
	for i := range 10000 {
		d := f(i%5 + 1)
		require.GreaterOrEqual(t, d, 500*ms)
		require.LessOrEqual(t, d, 1500*ms)
		if d%ms != 0 {
			subMillisecond++
		}
		lo, hi = min(lo, d), max(hi, d)
	}
	// With 10,000 uniform draws, missing the bottom or top 10% has probability 0.9^10000.
	assert.Less(t, lo, 600*ms, "spread down")
	assert.Greater(t, hi, 1400*ms, "spread up")
	assert.Greater(t, subMillisecond, 9900, "Duration precision")
}

func TestExponentialRandomBackoffCapsAfterRandomizing(t *testing.T) {
	f, err := retry.ExponentialRandomBackoff(time.Second, 2, 0.5, 1200*ms, nil)
	require.NoError(t, err)
	var below, atCap int
	for range 10000 {
		d := f(1) // 1000ms spread to [500, 1500], then capped
		require.GreaterOrEqual(t, d, 500*ms)
		require.LessOrEqual(t, d, 1200*ms)
		if d == 1200*ms {
			atCap++
		} else {
			below++
		}
		require.Equal(t, 1200*ms, f(3)) // 4000ms spread to [2000, 6000]: always capped
	}
	// P(at cap) is 0.3 per draw: both counts are far from 0 in 10,000 draws.
	assert.Positive(t, below)
	assert.Positive(t, atCap)
}

// spreadBounds returns the documented range of a randomized wait around d: [d − δ, d + δ]
// with δ = trunc(d × factor), d + δ saturating at the largest Duration.
func spreadBounds(d time.Duration, factor float64) (lo, hi time.Duration) {
	delta := time.Duration(float64(d) * factor)
	lo, hi = d-delta, d+delta
	if hi < d {
		hi = longest
	}
	return lo, hi
}

// TestPropertyRandomizedWithinBounds draws intervals, factors, multipliers, caps and attempts
// and checks every randomized wait, from the real random source, against its exact bounds:
// within spreadBounds of the exponential interval, never 0, and never above the cap.
func TestPropertyRandomizedWithinBounds(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		d := time.Duration(rapid.Int64Range(1, int64(time.Hour)).Draw(rt, "interval"))
		factor := rapid.Float64Range(0, math.Nextafter(1, 0)).Draw(rt, "factor")

		f, err := retry.RandomizedInterval(d, factor, nil)
		require.NoError(rt, err)
		v := f(rapid.IntRange(-3, 100).Draw(rt, "attempt"))
		lo, hi := spreadBounds(d, factor)
		require.GreaterOrEqual(rt, v, lo)
		require.LessOrEqual(rt, v, hi)
		require.Positive(rt, v)

		multiplier := rapid.Float64Range(1, 3).Draw(rt, "multiplier")
		attempt := rapid.IntRange(1, 60).Draw(rt, "attempt")
		capped := rapid.Bool().Draw(rt, "capped")
		var maxWait time.Duration
		if capped {
			maxWait = d + time.Duration(rapid.Int64Range(0, int64(time.Hour)).Draw(rt, "above initial"))
		}
		g, err := retry.ExponentialRandomBackoff(d, multiplier, factor, maxWait, nil)
		require.NoError(rt, err)
		e, err := retry.ExponentialBackoff(d, multiplier, 0)
		require.NoError(rt, err)
		lo, hi = spreadBounds(e(attempt), factor)
		if capped {
			lo, hi = min(lo, maxWait), min(hi, maxWait)
		}
		w := g(attempt)
		require.GreaterOrEqual(rt, w, lo)
		require.LessOrEqual(rt, w, hi)
		require.Positive(rt, w)
	})
}

func TestIntervalConstructorsRefuseBadArguments(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name  string
		build func() (retry.IntervalFunction, error)
		want  string
	}{
		{"FixedInterval zero", func() (retry.IntervalFunction, error) { return retry.FixedInterval(0) },
			"retry: FixedInterval interval must be > 0, got 0s"},
		{"FixedInterval negative", func() (retry.IntervalFunction, error) { return retry.FixedInterval(-time.Second) },
			"retry: FixedInterval interval must be > 0, got -1s"},
		{"ExponentialBackoff interval zero", func() (retry.IntervalFunction, error) { return retry.ExponentialBackoff(0, 2, 0) },
			"retry: ExponentialBackoff interval must be > 0, got 0s"},
		{"ExponentialBackoff interval negative", func() (retry.IntervalFunction, error) { return retry.ExponentialBackoff(-ms, 2, 0) },
			"retry: ExponentialBackoff interval must be > 0, got -1ms"},
		{"ExponentialBackoff multiplier below 1", func() (retry.IntervalFunction, error) { return retry.ExponentialBackoff(ms, 0.5, 0) },
			"retry: ExponentialBackoff multiplier must be a finite number >= 1, got 0.5"},
		{"ExponentialBackoff multiplier just below 1", func() (retry.IntervalFunction, error) {
			return retry.ExponentialBackoff(ms, math.Nextafter(1, 0), 0)
		}, "retry: ExponentialBackoff multiplier must be a finite number >= 1, got 0.9999999999999999"},
		{"ExponentialBackoff multiplier NaN", func() (retry.IntervalFunction, error) { return retry.ExponentialBackoff(ms, nan, 0) },
			"retry: ExponentialBackoff multiplier must be a finite number >= 1, got NaN"},
		{"ExponentialBackoff multiplier +Inf", func() (retry.IntervalFunction, error) { return retry.ExponentialBackoff(ms, inf, 0) },
			"retry: ExponentialBackoff multiplier must be a finite number >= 1, got +Inf"},
		{"ExponentialBackoff multiplier -Inf", func() (retry.IntervalFunction, error) { return retry.ExponentialBackoff(ms, -inf, 0) },
			"retry: ExponentialBackoff multiplier must be a finite number >= 1, got -Inf"},
		{"ExponentialBackoff max below interval", func() (retry.IntervalFunction, error) { return retry.ExponentialBackoff(4*ms, 2, 3*ms) },
			"retry: ExponentialBackoff max must be 0 (no cap) or >= interval (4ms), got 3ms"},
		{"ExponentialBackoff max one nanosecond below interval", func() (retry.IntervalFunction, error) {
			return retry.ExponentialBackoff(4*ms, 2, 4*ms-1)
		}, "retry: ExponentialBackoff max must be 0 (no cap) or >= interval (4ms), got 3.999999ms"},
		{"ExponentialBackoff max negative", func() (retry.IntervalFunction, error) { return retry.ExponentialBackoff(ms, 2, -ms) },
			"retry: ExponentialBackoff max must be 0 (no cap) or >= interval (1ms), got -1ms"},
		{"RandomizedInterval interval", func() (retry.IntervalFunction, error) { return retry.RandomizedInterval(0, 0.5, nil) },
			"retry: RandomizedInterval interval must be > 0, got 0s"},
		{"RandomizedInterval factor negative", func() (retry.IntervalFunction, error) { return retry.RandomizedInterval(ms, -0.1, nil) },
			"retry: RandomizedInterval randomizationFactor must be in [0, 1), got -0.1"},
		{"RandomizedInterval factor 1", func() (retry.IntervalFunction, error) { return retry.RandomizedInterval(ms, 1, nil) },
			"retry: RandomizedInterval randomizationFactor must be in [0, 1), got 1"},
		{"RandomizedInterval factor NaN", func() (retry.IntervalFunction, error) { return retry.RandomizedInterval(ms, nan, nil) },
			"retry: RandomizedInterval randomizationFactor must be in [0, 1), got NaN"},
		{"RandomizedInterval factor +Inf", func() (retry.IntervalFunction, error) { return retry.RandomizedInterval(ms, inf, nil) },
			"retry: RandomizedInterval randomizationFactor must be in [0, 1), got +Inf"},
		{"ExponentialRandomBackoff interval", func() (retry.IntervalFunction, error) {
			return retry.ExponentialRandomBackoff(-ms, 2, 0.5, 0, nil)
		}, "retry: ExponentialRandomBackoff interval must be > 0, got -1ms"},
		{"ExponentialRandomBackoff multiplier", func() (retry.IntervalFunction, error) {
			return retry.ExponentialRandomBackoff(ms, 0, 0.5, 0, nil)
		}, "retry: ExponentialRandomBackoff multiplier must be a finite number >= 1, got 0"},
		{"ExponentialRandomBackoff multiplier NaN", func() (retry.IntervalFunction, error) {
			return retry.ExponentialRandomBackoff(ms, nan, 0.5, 0, nil)
		}, "retry: ExponentialRandomBackoff multiplier must be a finite number >= 1, got NaN"},
		{"ExponentialRandomBackoff factor", func() (retry.IntervalFunction, error) {
			return retry.ExponentialRandomBackoff(ms, 2, 2, 0, nil)
		}, "retry: ExponentialRandomBackoff randomizationFactor must be in [0, 1), got 2"},
		{"ExponentialRandomBackoff factor NaN", func() (retry.IntervalFunction, error) {
			return retry.ExponentialRandomBackoff(ms, 2, nan, 0, nil)
		}, "retry: ExponentialRandomBackoff randomizationFactor must be in [0, 1), got NaN"},
		{"ExponentialRandomBackoff max", func() (retry.IntervalFunction, error) {
			return retry.ExponentialRandomBackoff(2*ms, 2, 0.5, ms, nil)
		}, "retry: ExponentialRandomBackoff max must be 0 (no cap) or >= interval (2ms), got 1ms"},
		{"FullJitterBackoff interval", func() (retry.IntervalFunction, error) { return retry.FullJitterBackoff(0, 0, nil) },
			"retry: FullJitterBackoff interval must be > 0, got 0s"},
		{"FullJitterBackoff max below interval", func() (retry.IntervalFunction, error) { return retry.FullJitterBackoff(2*ms, ms, nil) },
			"retry: FullJitterBackoff max must be 0 (no cap) or >= interval (2ms), got 1ms"},
		{"FullJitterBackoff max negative", func() (retry.IntervalFunction, error) { return retry.FullJitterBackoff(ms, -ms, nil) },
			"retry: FullJitterBackoff max must be 0 (no cap) or >= interval (1ms), got -1ms"},
		{"DecorrelatedJitterBackoff interval", func() (retry.IntervalFunction, error) { return retry.DecorrelatedJitterBackoff(-ms, ms, nil) },
			"retry: DecorrelatedJitterBackoff interval must be > 0, got -1ms"},
		{"DecorrelatedJitterBackoff max required", func() (retry.IntervalFunction, error) {
			return retry.DecorrelatedJitterBackoff(ms, 0, nil)
		}, "retry: DecorrelatedJitterBackoff max must be >= interval (1ms), got 0s"},
		{"DecorrelatedJitterBackoff max below interval", func() (retry.IntervalFunction, error) {
			return retry.DecorrelatedJitterBackoff(ms, ms-1, nil)
		}, "retry: DecorrelatedJitterBackoff max must be >= interval (1ms), got 999.999µs"},
		{"WithJitter f", func() (retry.IntervalFunction, error) { return retry.WithJitter(nil, ms, nil) },
			"retry: WithJitter f must not be nil"},
		{"WithJitter jitter", func() (retry.IntervalFunction, error) {
			return retry.WithJitter(func(int) time.Duration { return ms }, 0, nil)
		}, "retry: WithJitter jitter must be > 0, got 0s"},
		{"WithJitter jitter negative", func() (retry.IntervalFunction, error) {
			return retry.WithJitter(func(int) time.Duration { return ms }, -ms, nil)
		}, "retry: WithJitter jitter must be > 0, got -1ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := tt.build()
			assert.Nil(t, f)
			assert.EqualError(t, err, tt.want)
		})
	}
}

// fixedSource is a rand.Source whose draws all give u: rand.New(s).Float64() is the top 53
// bits of Uint64 over 2^53.
type fixedSource struct{ bits uint64 }

func (s fixedSource) Uint64() uint64 { return s.bits }

func sourceAt(u float64) rand.Source { return fixedSource{uint64(u * (1 << 53))} }

// TestRandomizedIntervalsDrawFromTheirSource: every randomized interval takes its u from the
// source given, as its formula says, so a fixed source gives the exact wait and a seeded one the
// same sequence on every run.
func TestRandomizedIntervalsDrawFromTheirSource(t *testing.T) {
	tests := []struct {
		name  string
		build func(rand.Source) (retry.IntervalFunction, error)
		u     float64
		want  []time.Duration // attempts 1, 2, 3
	}{
		// interval × (1 + f × (2u − 1)): 1s × (1 + 0.5 × −0.5).
		{"RandomizedInterval", func(s rand.Source) (retry.IntervalFunction, error) {
			return retry.RandomizedInterval(time.Second, 0.5, s)
		}, 0.25, []time.Duration{750 * ms, 750 * ms, 750 * ms}},
		{"RandomizedInterval u=0.75", func(s rand.Source) (retry.IntervalFunction, error) {
			return retry.RandomizedInterval(time.Second, 0.5, s)
		}, 0.75, []time.Duration{1250 * ms, 1250 * ms, 1250 * ms}},
		// d × (1 + f × (2u − 1)) with d = 500ms × 1.5^(attempt−1), capped at 1s.
		{"ExponentialRandomBackoff", func(s rand.Source) (retry.IntervalFunction, error) {
			return retry.ExponentialRandomBackoff(500*ms, 1.5, 0.5, time.Second, s)
		}, 0.25, []time.Duration{375 * ms, 562500 * us, 843750 * us}},
		// trunc(u × min(max, interval × 2^(attempt−1))).
		{"FullJitterBackoff", func(s rand.Source) (retry.IntervalFunction, error) {
			return retry.FullJitterBackoff(100*ms, 0, s)
		}, 0.25, []time.Duration{25 * ms, 50 * ms, 100 * ms}},
		// waitₙ = interval + trunc(u × (3 × waitₙ₋₁ − interval)) from wait₀ = 100ms, at u = 0.25.
		{"DecorrelatedJitterBackoff", func(s rand.Source) (retry.IntervalFunction, error) {
			return retry.DecorrelatedJitterBackoff(100*ms, time.Second, s)
		}, 0.25, []time.Duration{150 * ms, 187500 * us, 215625 * us}},
		// lo + trunc(u × (hi − lo)) around a fixed 1s with jitter 100ms.
		{"WithJitter", func(s rand.Source) (retry.IntervalFunction, error) {
			return retry.WithJitter(func(int) time.Duration { return time.Second }, 100*ms, s)
		}, 0.25, []time.Duration{950 * ms, 950 * ms, 950 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := tt.build(sourceAt(tt.u))
			require.NoError(t, err)
			assert.Equal(t, tt.want, sequence(f, 3))

			a, err := tt.build(rand.NewPCG(1, 2))
			require.NoError(t, err)
			b, err := tt.build(rand.NewPCG(1, 2))
			require.NoError(t, err)
			assert.Equal(t, sequence(a, 20), sequence(b, 20), "a seeded source repeats")
		})
	}
}
