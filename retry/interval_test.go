package retry_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/retry"
)

const ms = time.Millisecond

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
		{"Resilience4j example", 500 * ms, 1.5, 0, []time.Duration{500 * ms, 750 * ms, 1125 * ms, 1687 * ms, 2530 * ms}},
		{"seed scenario 2", 100 * ms, 2, 0, []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms}},
		// Truncation at every step, not once at the end: 3, 4.5→4, 6, 9, 13.5→13, 19.5→19
		// (a single truncation of 3·1.5^n would give 3, 4, 6, 10, 15, 22).
		{"truncates per step", 3 * ms, 1.5, 0, []time.Duration{3 * ms, 4 * ms, 6 * ms, 9 * ms, 13 * ms, 19 * ms}},
		{"stuck where truncation cancels growth", 1 * ms, 1.5, 0, []time.Duration{ms, ms, ms, ms}},
		{"multiplier 1 is constant", 200 * ms, 1, 0, []time.Duration{200 * ms, 200 * ms, 200 * ms}},
		{"capped", 500 * ms, 1.5, time.Second, []time.Duration{500 * ms, 750 * ms, time.Second, time.Second, time.Second}},
		{"cap below initial", 500 * ms, 2, 300 * ms, []time.Duration{300 * ms, 300 * ms, 300 * ms}},
		{"sub-millisecond parts dropped", 1500 * time.Microsecond, 2, 0, []time.Duration{ms, 2 * ms, 4 * ms}},
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
	longest := time.Duration(math.MaxInt64/int64(ms)) * ms
	f, err := retry.ExponentialBackoff(ms, 10, 0)
	require.NoError(t, err)
	assert.Equal(t, longest, f(100))
	assert.Equal(t, longest, f(math.MaxInt)) // stops iterating once saturated
	assert.Equal(t, 10*ms, f(2))
	assert.Positive(t, f(1000))
}

func TestExponentialBackoffHugeAttemptAtFixedPoint(t *testing.T) {
	f, err := retry.ExponentialBackoff(7*ms, 1, 0)
	require.NoError(t, err)
	assert.Equal(t, 7*ms, f(math.MaxInt)) // returns at once: the value stops changing
	g, err := retry.ExponentialBackoff(ms, 3, time.Second)
	require.NoError(t, err)
	assert.Equal(t, time.Second, g(math.MaxInt)) // stops once past the cap
}

func TestIntervalAttemptBelowOneIsFirst(t *testing.T) {
	f, err := retry.ExponentialBackoff(100*ms, 2, 0)
	require.NoError(t, err)
	assert.Equal(t, 100*ms, f(0))
	assert.Equal(t, 100*ms, f(-5))
}

func TestFixedInterval(t *testing.T) {
	f, err := retry.FixedInterval(250 * ms)
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{250 * ms, 250 * ms, 250 * ms}, sequence(f, 3))
	g, err := retry.FixedInterval(1999 * time.Microsecond)
	require.NoError(t, err)
	assert.Equal(t, ms, g(1))
}

func TestRandomizedIntervalStaysInRange(t *testing.T) {
	f, err := retry.RandomizedInterval(time.Second, 0.5)
	require.NoError(t, err)
	lo, hi := time.Duration(math.MaxInt64), time.Duration(0)
	for i := range 10000 {
		d := f(i%5 + 1)
		require.GreaterOrEqual(t, d, 500*ms)
		require.LessOrEqual(t, d, 1500*ms)
		require.Zero(t, d%ms, "whole milliseconds")
		lo, hi = min(lo, d), max(hi, d)
	}
	assert.Less(t, lo, 600*ms, "spread down")
	assert.Greater(t, hi, 1400*ms, "spread up")
}

func TestRandomizedIntervalFactorZeroIsExact(t *testing.T) {
	f, err := retry.RandomizedInterval(300*ms, 0)
	require.NoError(t, err)
	for i := range 1000 {
		require.Equal(t, 300*ms, f(i+1))
	}
}

func TestRandomizedIntervalNeverBelowOneMillisecond(t *testing.T) {
	f, err := retry.RandomizedInterval(ms, 1)
	require.NoError(t, err)
	seen := map[time.Duration]bool{}
	for range 10000 {
		seen[f(1)] = true
	}
	// lo = 0, hi = 2: trunc(max(1, U·3)) is 1 or 2, never 0.
	assert.Equal(t, map[time.Duration]bool{ms: true, 2 * ms: true}, seen)
}

func TestExponentialRandomBackoffCapsAfterRandomizing(t *testing.T) {
	f, err := retry.ExponentialRandomBackoff(time.Second, 2, 0.5, 1200*ms)
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
	assert.Positive(t, below)
	assert.Positive(t, atCap)

	g, err := retry.ExponentialRandomBackoff(100*ms, 2, 0, 0)
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{100 * ms, 200 * ms, 400 * ms}, sequence(g, 3))
}

func TestIntervalConstructorsRefuseBadArguments(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name string
		make func() (retry.IntervalFunction, error)
		want string
	}{
		{"FixedInterval zero", func() (retry.IntervalFunction, error) { return retry.FixedInterval(0) },
			"retry: FixedInterval interval must be >= 1ms, got 0s"},
		{"FixedInterval sub-millisecond", func() (retry.IntervalFunction, error) { return retry.FixedInterval(999 * time.Microsecond) },
			"retry: FixedInterval interval must be >= 1ms, got 999µs"},
		{"FixedInterval negative", func() (retry.IntervalFunction, error) { return retry.FixedInterval(-time.Second) },
			"retry: FixedInterval interval must be >= 1ms, got -1s"},
		{"ExponentialBackoff initial", func() (retry.IntervalFunction, error) { return retry.ExponentialBackoff(0, 2, 0) },
			"retry: ExponentialBackoff initial interval must be >= 1ms, got 0s"},
		{"ExponentialBackoff multiplier below 1", func() (retry.IntervalFunction, error) { return retry.ExponentialBackoff(ms, 0.5, 0) },
			"retry: ExponentialBackoff multiplier must be a finite number >= 1, got 0.5"},
		{"ExponentialBackoff multiplier NaN", func() (retry.IntervalFunction, error) { return retry.ExponentialBackoff(ms, nan, 0) },
			"retry: ExponentialBackoff multiplier must be a finite number >= 1, got NaN"},
		{"ExponentialBackoff multiplier Inf", func() (retry.IntervalFunction, error) { return retry.ExponentialBackoff(ms, inf, 0) },
			"retry: ExponentialBackoff multiplier must be a finite number >= 1, got +Inf"},
		{"ExponentialBackoff max negative", func() (retry.IntervalFunction, error) { return retry.ExponentialBackoff(ms, 2, -ms) },
			"retry: ExponentialBackoff max interval must be 0 (no cap) or >= 1ms, got -1ms"},
		{"ExponentialBackoff max sub-millisecond", func() (retry.IntervalFunction, error) { return retry.ExponentialBackoff(ms, 2, time.Microsecond) },
			"retry: ExponentialBackoff max interval must be 0 (no cap) or >= 1ms, got 1µs"},
		{"RandomizedInterval interval", func() (retry.IntervalFunction, error) { return retry.RandomizedInterval(0, 0.5) },
			"retry: RandomizedInterval interval must be >= 1ms, got 0s"},
		{"RandomizedInterval factor negative", func() (retry.IntervalFunction, error) { return retry.RandomizedInterval(ms, -0.1) },
			"retry: RandomizedInterval randomization factor must be in [0, 1], got -0.1"},
		{"RandomizedInterval factor above 1", func() (retry.IntervalFunction, error) { return retry.RandomizedInterval(ms, 1.5) },
			"retry: RandomizedInterval randomization factor must be in [0, 1], got 1.5"},
		{"RandomizedInterval factor NaN", func() (retry.IntervalFunction, error) { return retry.RandomizedInterval(ms, nan) },
			"retry: RandomizedInterval randomization factor must be in [0, 1], got NaN"},
		{"ExponentialRandomBackoff initial", func() (retry.IntervalFunction, error) {
			return retry.ExponentialRandomBackoff(-ms, 2, 0.5, 0)
		}, "retry: ExponentialRandomBackoff initial interval must be >= 1ms, got -1ms"},
		{"ExponentialRandomBackoff multiplier", func() (retry.IntervalFunction, error) {
			return retry.ExponentialRandomBackoff(ms, 0, 0.5, 0)
		}, "retry: ExponentialRandomBackoff multiplier must be a finite number >= 1, got 0"},
		{"ExponentialRandomBackoff factor", func() (retry.IntervalFunction, error) {
			return retry.ExponentialRandomBackoff(ms, 2, 2, 0)
		}, "retry: ExponentialRandomBackoff randomization factor must be in [0, 1], got 2"},
		{"ExponentialRandomBackoff max", func() (retry.IntervalFunction, error) {
			return retry.ExponentialRandomBackoff(ms, 2, 0.5, -time.Second)
		}, "retry: ExponentialRandomBackoff max interval must be 0 (no cap) or >= 1ms, got -1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := tt.make()
			assert.Nil(t, f)
			assert.EqualError(t, err, tt.want)
		})
	}
}
