package retry

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// withUniform fixes U for the randomized intervals. Tests using it must not run in parallel.
func withUniform(t *testing.T, u float64) {
	prev := uniform
	uniform = func() float64 { return u }
	t.Cleanup(func() { uniform = prev })
}

// almostOne is the largest U the source returns.
var almostOne = math.Nextafter(1, 0)

// TestRandomizedIntervalFormula checks d − δ + U·2δ with δ = trunc(d × factor), truncated to
// the nanosecond, at chosen values of U.
func TestRandomizedIntervalFormula(t *testing.T) {
	tests := []struct {
		name   string
		d      time.Duration
		factor float64
		u      float64
		want   time.Duration
	}{
		{"U=0 gives d − δ", time.Second, 0.5, 0, 500 * time.Millisecond},
		{"U=0.5 gives d", time.Second, 0.5, 0.5, time.Second},
		{"U=0.25", time.Second, 0.5, 0.25, 750 * time.Millisecond},
		{"U just below 1 stays below d + δ", time.Second, 0.5, almostOne, 1500*time.Millisecond - 1},
		{"factor 0 ignores U", 300 * time.Millisecond, 0, almostOne, 300 * time.Millisecond},
		{"sub-millisecond kept", 1500 * time.Microsecond, 0.2, 0.5, 1500 * time.Microsecond},
		{"sub-millisecond spread", 1500 * time.Microsecond, 0.2, 0, 1200 * time.Microsecond},
		{"δ truncated to the nanosecond", 3, 0.5, 0, 2}, // δ = trunc(1.5) = 1
		{"one nanosecond cannot spread", 1, almostOne, 0, 1},
		{"largest factor keeps 1ns", 10, almostOne, 0, 1}, // δ = trunc(9.99…) = 9
		{"offset truncated", 10 * time.Millisecond, 0.25, 0.3, 9*time.Millisecond + 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			withUniform(t, tt.u)
			f, err := RandomizedInterval(tt.d, tt.factor, nil)
			require.NoError(t, err)
			assert.Equal(t, tt.want, f(1))
		})
	}
}

func TestExponentialRandomBackoffFormula(t *testing.T) {
	withUniform(t, 0.25)
	f, err := ExponentialRandomBackoff(500*time.Millisecond, 1.5, 0.5, 0, nil)
	require.NoError(t, err)
	// Attempt 3: exponential 1125ms; δ = 562.5ms; 562.5 + 0.25 × 1125 = 843.75ms.
	assert.Equal(t, 843750*time.Microsecond, f(3))

	capped, err := ExponentialRandomBackoff(500*time.Millisecond, 1.5, 0.5, 800*time.Millisecond, nil)
	require.NoError(t, err)
	assert.Equal(t, 800*time.Millisecond, capped(3))
	// Attempt 1: 250 + 0.25 × 500 = 375ms: below the cap, kept.
	assert.Equal(t, 375*time.Millisecond, capped(1))

	withUniform(t, almostOne)
	huge, err := ExponentialRandomBackoff(time.Hour, 10, 0.5, 0, nil)
	require.NoError(t, err)
	// Saturated at the largest Duration, d = 2^63 − 1; δ = 2^62; the range [2^62 − 1, 2^63 − 1]
	// is 2^62 wide and U = 1 − 2^−53 lands 2^62 × 2^−53 = 512ns short of its top.
	assert.Equal(t, time.Duration(math.MaxInt64-512), huge(30))
}

// TestPropertySpread: for any interval (up to the largest Duration), factor in [0, 1) and U in
// [0, 1), the wait is within [d − δ, d + δ] (d + δ saturating), never 0, and grows with U.
func TestPropertySpread(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := time.Duration(rapid.OneOf(
			rapid.Int64Range(1, 1000),
			rapid.Int64Range(1, math.MaxInt64),
			rapid.Int64Range(math.MaxInt64-1<<20, math.MaxInt64),
		).Draw(t, "d"))
		factor := rapid.OneOf(rapid.Float64Range(0, almostOne), rapid.Just(almostOne), rapid.Just(0.0)).Draw(t, "factor")
		u1 := rapid.OneOf(rapid.Float64Range(0, almostOne), rapid.Just(almostOne), rapid.Just(0.0)).Draw(t, "u1")
		u2 := rapid.Float64Range(u1, almostOne).Draw(t, "u2")

		delta := min(time.Duration(float64(d)*factor), d-1)
		lo := d - delta
		hi := d + delta
		if hi < d {
			hi = math.MaxInt64
		}
		v1, v2 := spread(d, factor, u1), spread(d, factor, u2)
		if v1 < lo || v1 > hi {
			t.Fatalf("spread(%d, %v, %v) = %d, outside [%d, %d]", d, factor, u1, v1, lo, hi)
		}
		if v1 < 1 {
			t.Fatalf("spread(%d, %v, %v) = %d, not positive", d, factor, u1, v1)
		}
		if v2 < v1 {
			t.Fatalf("spread(%d, %v, ·) decreases: %d at U=%v, %d at U=%v", d, factor, v1, u1, v2, u2)
		}
		if factor == 0 && v1 != d {
			t.Fatalf("spread(%d, 0, %v) = %d, want d", d, u1, v1)
		}
	})
}
