package retry

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

const msec = time.Millisecond

func TestFullJitterBackoffFormula(t *testing.T) {
	tests := []struct {
		name     string
		base     time.Duration
		max      time.Duration
		u        float64
		attempts []int
		want     []time.Duration
	}{
		{"U=0.5 halves base × 2^(n−1)", 100 * msec, 0, 0.5, []int{1, 2, 3, 4}, []time.Duration{50 * msec, 100 * msec, 200 * msec, 400 * msec}},
		{"U=0 waits nothing", 100 * msec, 0, 0, []int{1, 5}, []time.Duration{0, 0}},
		// U × 1e8 rounds to the float64 just below 1e8, truncated: one nanosecond short.
		{"U just below 1 stays just below the ceiling", 100 * msec, 0, almostOne, []int{1, 3}, []time.Duration{100*msec - 1, 400*msec - 1}},
		{"the cap bounds the ceiling", 100 * msec, 300 * msec, 0.5, []int{1, 2, 3, 10}, []time.Duration{50 * msec, 100 * msec, 150 * msec, 150 * msec}},
		{"U=0.25, truncated to the nanosecond", 3, 0, 0.25, []int{1, 2}, []time.Duration{0, 1}}, // 0.75ns, 1.5ns
		{"attempt below 1 is the first", 100 * msec, 0, 0.5, []int{0, -3}, []time.Duration{50 * msec, 50 * msec}},
		{"huge attempt saturates, then the cap", time.Second, time.Hour, 0.5, []int{1000}, []time.Duration{30 * time.Minute}},
		// Saturated at 2^63 − 1, which float64 holds as 2^63: U × 2^63 = 2^63 − 2^10.
		{"huge attempt, no cap", time.Hour, 0, almostOne, []int{200}, []time.Duration{math.MaxInt64 - 1023}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			withUniform(t, tt.u)
			f, err := FullJitterBackoff(tt.base, tt.max, nil)
			require.NoError(t, err)
			got := make([]time.Duration, len(tt.attempts))
			for i, a := range tt.attempts {
				got[i] = f(a)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestDecorrelatedJitterBackoffFormula(t *testing.T) {
	tests := []struct {
		name     string
		u        float64
		attempts []int
		want     []time.Duration
	}{
		// base 10ms: wait₁ = 10 + U × (30 − 10) = 20ms, wait₂ = 10 + U × (60 − 10) = 35ms,
		// wait₃ = 10 + U × (105 − 10) = 57.5ms.
		{"U=0.5", 0.5, []int{1, 2, 3}, []time.Duration{20 * msec, 35 * msec, 57500 * time.Microsecond}},
		{"U=0 stays at base", 0, []int{1, 2, 7}, []time.Duration{10 * msec, 10 * msec, 10 * msec}},
		// Nearly triples each time (U < 1, truncated to the nanosecond): 30, 90, 270, 810ms less
		// a few nanoseconds, then the cap of 1s.
		{"U just below 1 nearly triples up to the cap", almostOne, []int{1, 2, 3, 4, 5, 9},
			[]time.Duration{30*msec - 1, 90*msec - 4, 270*msec - 13, 810*msec - 40, time.Second, time.Second}},
		{"attempt below 1 is the first", 0.5, []int{0, -1}, []time.Duration{20 * msec, 20 * msec}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			withUniform(t, tt.u)
			f, err := DecorrelatedJitterBackoff(10*msec, time.Second, nil)
			require.NoError(t, err)
			got := make([]time.Duration, len(tt.attempts))
			for i, a := range tt.attempts {
				got[i] = f(a)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestDecorrelatedJitterBackoffLargestCap(t *testing.T) {
	withUniform(t, almostOne)
	f, err := DecorrelatedJitterBackoff(time.Hour, math.MaxInt64, nil)
	require.NoError(t, err)
	// 1h × 3^k overflows past k = 14: the upper bound saturates at 2^63 − 1 instead of wrapping,
	// and U just below 1 lands 2^10 short of it, as float64 holds it as 2^63.
	assert.Equal(t, time.Duration(math.MaxInt64-1023), f(100))
}

func TestWithJitterFormula(t *testing.T) {
	constant := func(d time.Duration) IntervalFunction { return func(int) time.Duration { return d } }
	tests := []struct {
		name   string
		d      time.Duration
		jitter time.Duration
		u      float64
		want   time.Duration
	}{
		{"U=0 gives d − jitter", 100 * msec, 30 * msec, 0, 70 * msec},
		{"U=0.5 gives d", 100 * msec, 30 * msec, 0.5, 100 * msec},
		{"U=0.25", 100 * msec, 30 * msec, 0.25, 85 * msec},
		{"U just below 1 stays below d + jitter", 100 * msec, 30 * msec, almostOne, 130*msec - 1},
		{"never below 0", 10 * msec, 30 * msec, 0, 0},
		{"the range starts at 0 when jitter > d", 10 * msec, 30 * msec, 0.5, 20 * msec},
		{"0 stays within [0, jitter]", 0, 30 * msec, 0.5, 15 * msec},
		{"saturates at the largest Duration", math.MaxInt64 - 10, 30, almostOne, math.MaxInt64 - 1},
		{"near the largest Duration, low end", math.MaxInt64 - 10, 30, 0, math.MaxInt64 - 40},
		{"a negative wait still stops", -1, 30 * msec, 0.5, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			withUniform(t, tt.u)
			f, err := WithJitter(constant(tt.d), tt.jitter, nil)
			require.NoError(t, err)
			assert.Equal(t, tt.want, f(1))
		})
	}
}

func TestWithJitterPassesTheAttempt(t *testing.T) {
	withUniform(t, 0.5)
	backoff, err := ExponentialBackoff(100*msec, 2, 0)
	require.NoError(t, err)
	f, err := WithJitter(backoff, 10*msec, nil)
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{100 * msec, 200 * msec, 400 * msec}, []time.Duration{f(1), f(2), f(3)})
}

// TestJitterDeterministicUnderASeededSource: given a PCG source with a fixed state, the waits
// are the formulas applied to that source's numbers, and the same state gives the same waits.
func TestJitterDeterministicUnderASeededSource(t *testing.T) {
	pcg := func() rand.Source { return rand.NewPCG(7, 7) }
	draws := func(n int) []float64 {
		r := rand.New(pcg())
		us := make([]float64, n)
		for i := range us {
			us[i] = r.Float64()
		}
		return us
	}
	us := draws(4)
	withUniform(t, 0.5) // the top-level generator's stand-in, which no function below may use

	full, err := FullJitterBackoff(100*msec, 0, pcg())
	require.NoError(t, err)
	got := []time.Duration{full(1), full(2), full(3), full(4)}
	want := make([]time.Duration, 4)
	for i, u := range us {
		want[i] = time.Duration(u * float64(100*msec<<i))
	}
	assert.Equal(t, want, got)
	again, err := FullJitterBackoff(100*msec, 0, pcg())
	require.NoError(t, err)
	assert.Equal(t, got, []time.Duration{again(1), again(2), again(3), again(4)}, "the same state gives the same waits")

	dec, err := DecorrelatedJitterBackoff(10*msec, time.Second, pcg())
	require.NoError(t, err)
	w := 10 * msec
	for _, u := range us[:3] {
		w = min(10*msec+time.Duration(u*float64(3*w-10*msec)), time.Second)
	}
	assert.Equal(t, w, dec(3), "attempt 3 draws a chain of three")

	jit, err := WithJitter(func(int) time.Duration { return time.Second }, 100*msec, pcg())
	require.NoError(t, err)
	assert.Equal(t, 900*msec+time.Duration(us[0]*float64(200*msec)), jit(1))
}

// TestJitterSourceUnderConcurrentRetries: a source that is not safe for concurrent use is
// drawn from under the function's mutex (the race detector checks it), and every draw is
// used once: N concurrent waits are the first N numbers of the source, in some order.
func TestJitterSourceUnderConcurrentRetries(t *testing.T) {
	const n = 200
	full, err := FullJitterBackoff(time.Second, 0, rand.NewPCG(3, 4))
	require.NoError(t, err)
	got := make(chan time.Duration, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { got <- full(1) })
	}
	wg.Wait()
	close(got)
	r := rand.New(rand.NewPCG(3, 4))
	want := map[time.Duration]int{}
	for range n {
		want[time.Duration(r.Float64()*float64(time.Second))]++
	}
	seen := map[time.Duration]int{}
	for w := range got {
		seen[w]++
	}
	assert.Equal(t, want, seen)
}

func drawU(t *rapid.T, label string) float64 {
	return rapid.OneOf(rapid.Float64Range(0, almostOne), rapid.Just(almostOne), rapid.Just(0.0)).Draw(t, label)
}

// TestPropertyFullJitterWithinCeiling: for any base, cap, attempt and U, the wait is in
// [0, min(cap, base × 2^(attempt−1))] and grows with U.
func TestPropertyFullJitterWithinCeiling(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		base := time.Duration(rapid.Int64Range(1, int64(time.Hour)).Draw(t, "base"))
		max := time.Duration(rapid.OneOf(rapid.Just(int64(0)), rapid.Int64Range(int64(base), math.MaxInt64)).Draw(t, "max"))
		attempt := rapid.IntRange(-2, 300).Draw(t, "attempt")
		u1 := drawU(t, "u1")
		u2 := rapid.Float64Range(u1, almostOne).Draw(t, "u2")

		ceiling := base // base × 2^(attempt−1), saturating
		for i := 1; i < attempt; i++ {
			if ceiling > math.MaxInt64/2 {
				ceiling = math.MaxInt64
				break
			}
			ceiling *= 2
		}
		if max > 0 && ceiling > max {
			ceiling = max
		}
		f, err := FullJitterBackoff(base, max, nil)
		if err != nil {
			t.Fatal(err)
		}
		prev := uniform
		defer func() { uniform = prev }()
		uniform = func() float64 { return u1 }
		w1 := f(attempt)
		uniform = func() float64 { return u2 }
		w2 := f(attempt)
		if w1 < 0 || w1 > ceiling {
			t.Fatalf("wait %d outside [0, %d]", w1, ceiling)
		}
		if max > 0 && w1 > max {
			t.Fatalf("wait %d above the cap %d", w1, max)
		}
		if w2 < w1 {
			t.Fatalf("wait decreases with U: %d at %v, %d at %v", w1, u1, w2, u2)
		}
	})
}

// TestPropertyDecorrelatedJitterWithinBounds: from any PCG state every wait is in
// [base, max].
func TestPropertyDecorrelatedJitterWithinBounds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		base := time.Duration(rapid.Int64Range(1, int64(time.Hour)).Draw(t, "base"))
		max := time.Duration(rapid.Int64Range(int64(base), math.MaxInt64).Draw(t, "max"))
		attempt := rapid.IntRange(-2, 100).Draw(t, "attempt")
		state := rapid.Uint64().Draw(t, "state")
		f, err := DecorrelatedJitterBackoff(base, max, rand.NewPCG(state, 0))
		if err != nil {
			t.Fatal(err)
		}
		if w := f(attempt); w < base || w > max {
			t.Fatalf("wait %d outside [%d, %d]", w, base, max)
		}
	})
}

// TestPropertyWithJitterWithinRange: the wait is in [max(0, d − jitter), d + jitter]
// (saturating), and a negative d is kept.
func TestPropertyWithJitterWithinRange(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := time.Duration(rapid.OneOf(rapid.Int64Range(-5, 1000), rapid.Int64Range(0, math.MaxInt64),
			rapid.Int64Range(math.MaxInt64-1<<20, math.MaxInt64)).Draw(t, "d"))
		jitter := time.Duration(rapid.Int64Range(1, math.MaxInt64).Draw(t, "jitter"))
		u := drawU(t, "u")
		f, err := WithJitter(func(int) time.Duration { return d }, jitter, nil)
		if err != nil {
			t.Fatal(err)
		}
		prev := uniform
		defer func() { uniform = prev }()
		uniform = func() float64 { return u }
		w := f(1)
		if d < 0 {
			if w != d {
				t.Fatalf("negative wait %d became %d", d, w)
			}
			return
		}
		lo := d - jitter
		if lo < 0 {
			lo = 0
		}
		hi := d + jitter
		if hi < d {
			hi = math.MaxInt64
		}
		if w < lo || w > hi {
			t.Fatalf("wait %d outside [%d, %d]", w, lo, hi)
		}
	})
}
