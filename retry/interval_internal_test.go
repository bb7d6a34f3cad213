package retry

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withUniform fixes U for the randomized intervals. Tests using it must not run in parallel.
func withUniform(t *testing.T, u float64) {
	prev := uniform
	uniform = func() float64 { return u }
	t.Cleanup(func() { uniform = prev })
}

// TestRandomizedIntervalFormula checks Resilience4j's formula trunc(max(1, lo + U·(hi − lo + 1)))
// with lo = d·(1−f) and hi = d·(1+f), at chosen values of U.
func TestRandomizedIntervalFormula(t *testing.T) {
	tests := []struct {
		name   string
		d      time.Duration
		factor float64
		u      float64
		want   time.Duration
	}{
		{"U=0 gives lo", time.Second, 0.5, 0, 500 * time.Millisecond},
		{"U=0.5 gives lo + half of (hi-lo+1)", time.Second, 0.5, 0.5, 1000 * time.Millisecond}, // 500 + 500.5
		{"U near 1 reaches hi", time.Second, 0.5, 0.9999999, 1500 * time.Millisecond},          // 500 + 1000.9999
		{"factor 0 ignores U", 300 * time.Millisecond, 0, 0.9999999, 300 * time.Millisecond},
		{"never below 1ms", time.Millisecond, 1, 0, time.Millisecond},
		{"truncates", 10 * time.Millisecond, 0.25, 0.3, 9 * time.Millisecond}, // 7.5 + 0.3·(5+1) = 9.3
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			withUniform(t, tt.u)
			f, err := RandomizedInterval(tt.d, tt.factor)
			require.NoError(t, err)
			assert.Equal(t, tt.want, f(1))
		})
	}
}

func TestExponentialRandomBackoffFormula(t *testing.T) {
	withUniform(t, 0.25)
	f, err := ExponentialRandomBackoff(500*time.Millisecond, 1.5, 0.5, 0)
	require.NoError(t, err)
	// Attempt 3: exponential 1125; lo = 562.5, hi = 1687.5; 562.5 + 0.25·1126 = 844.
	assert.Equal(t, 844*time.Millisecond, f(3))

	capped, err := ExponentialRandomBackoff(500*time.Millisecond, 1.5, 0.5, 800*time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, 800*time.Millisecond, capped(3))
	// Attempt 1: lo = 250, 250 + 0.25·501 = 375.25: below the cap, kept.
	assert.Equal(t, 375*time.Millisecond, capped(1))
}
