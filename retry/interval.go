package retry

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// IntervalFunction returns the wait before a retry, given attempt, the number of failed
// attempts so far: 1 before the first retry, 2 before the second, and so on. A negative result
// stops retrying (see Execute for how the call then ends). It must be safe for concurrent use.
// As Resilience4j's IntervalFunction, in time.Duration rather than milliseconds.
type IntervalFunction func(attempt int) time.Duration

// IntervalBiFunction is an IntervalFunction that also sees the outcome that caused the retry:
// err is the failed attempt's error, or nil when the retry was caused by result matching
// RetryOnResultPredicate (then result is that value). As Resilience4j's IntervalBiFunction.
type IntervalBiFunction func(attempt int, err error, result any) time.Duration

// The constructors below compute every interval in time.Duration precision, to the nanosecond:
// a 1.5ms interval stays 1.5ms and a backoff of 4ms × 1.2 gives 4ms, 4.8ms, 5.76ms. This is
// finer than Resilience4j, which works in whole milliseconds and truncates each step (there
// that backoff stays at 4ms). Intervals saturate at the largest time.Duration (about 292 years)
// instead of overflowing; use a max to cap them. A bad argument is refused with an error naming
// it; the functions never panic, and take an attempt below 1 as 1.

// uniform returns U in [0, 1) for the randomized intervals given no Source; tests replace it.
var uniform = rand.Float64

// drawer returns the function giving U in [0, 1) from source, or from uniform when source is nil.
func drawer(source rand.Source) func() float64 {
	if source == nil {
		return func() float64 { return uniform() }
	}
	var mu sync.Mutex
	r := rand.New(source)
	return func() float64 {
		mu.Lock()
		defer mu.Unlock()
		return r.Float64()
	}
}

// FixedInterval returns a function giving interval before every retry, as Resilience4j's
// IntervalFunction.of(interval). interval must be > 0. (A constant wait is also what
// Config.WaitDuration alone gives.)
func FixedInterval(interval time.Duration) (IntervalFunction, error) {
	if err := checkPositive("FixedInterval", "interval", interval); err != nil {
		return nil, err
	}
	return func(int) time.Duration { return interval }, nil
}

// ExponentialBackoff returns a function giving initial × multiplier^(attempt−1), rounded to the
// nanosecond and capped at max (0: no cap), as Resilience4j's
// IntervalFunction.ofExponentialBackoff(initial, multiplier, max): initial 500ms with multiplier
// 1.5 gives 500ms, 750ms, 1.125s, 1.6875s, 2.53125s.
//
// initial must be > 0, multiplier a finite number >= 1 (a backoff that shrinks is refused) and
// max 0 or at least initial.
func ExponentialBackoff(initial time.Duration, multiplier float64, max time.Duration) (IntervalFunction, error) {
	const fn = "ExponentialBackoff"
	if err := checkExponential(fn, initial, multiplier, max); err != nil {
		return nil, err
	}
	return func(attempt int) time.Duration {
		return capAt(exponential(initial, multiplier, attempt), max)
	}, nil
}

// RandomizedInterval returns a function giving interval spread at random before every retry,
// as Resilience4j's IntervalFunction.ofRandomized: a wait drawn uniformly from
// [interval − δ, interval + δ], where δ is interval × randomizationFactor truncated to the
// nanosecond. interval must be > 0 and randomizationFactor in [0, 1), so the wait is never 0;
// factor 0 gives interval exactly.
func RandomizedInterval(interval time.Duration, randomizationFactor float64) (IntervalFunction, error) {
	const fn = "RandomizedInterval"
	if err := checkPositive(fn, "interval", interval); err != nil {
		return nil, err
	}
	if err := checkFactor(fn, randomizationFactor); err != nil {
		return nil, err
	}
	return func(int) time.Duration {
		return spread(interval, randomizationFactor, uniform())
	}, nil
}

// ExponentialRandomBackoff returns ExponentialBackoff's interval (before its cap) spread at
// random as RandomizedInterval, then capped at max (0: no cap), as Resilience4j's
// IntervalFunction.ofExponentialRandomBackoff: the cap applies after the spread, so waits near
// the cap are max itself. Arguments are checked as in ExponentialBackoff and RandomizedInterval.
func ExponentialRandomBackoff(initial time.Duration, multiplier, randomizationFactor float64, max time.Duration) (IntervalFunction, error) {
	const fn = "ExponentialRandomBackoff"
	if err := checkExponential(fn, initial, multiplier, max); err != nil {
		return nil, err
	}
	if err := checkFactor(fn, randomizationFactor); err != nil {
		return nil, err
	}
	return func(attempt int) time.Duration {
		d := exponential(initial, multiplier, attempt)
		return capAt(spread(d, randomizationFactor, uniform()), max)
	}, nil
}

// FullJitterBackoff returns AWS's "full jitter" backoff (the Architecture Blog's "Exponential
// Backoff And Jitter"): a wait drawn uniformly from [0, min(max, base × 2^(attempt−1))], to the
// nanosecond, so the first retry waits up to base, the second up to 2 × base, and so on. Waits
// may be 0 (retry at once): spreading the retries of many callers over the whole range is the
// point. base must be > 0 and max 0 (no cap) or at least base.
//
// The draws come from source, as the chaos package's Config.Source: a math/rand/v2 Source such
// as rand.NewPCG(1, 2) makes the waits the same on every run with the same order of retries.
// The returned function uses it under a mutex of its own, so it need not be safe for
// concurrent use, but it must not be used elsewhere. nil means math/rand/v2's top-level
// generator (randomly seeded, no lock), which RandomizedInterval and ExponentialRandomBackoff
// always use.
func FullJitterBackoff(base, max time.Duration, source rand.Source) (IntervalFunction, error) {
	const fn = "FullJitterBackoff"
	if err := checkJitterBackoff(fn, base, max); err != nil {
		return nil, err
	}
	u := drawer(source)
	return func(attempt int) time.Duration {
		return within(capAt(exponential(base, 2, attempt), max), u())
	}, nil
}

// DecorrelatedJitterBackoff returns AWS's "decorrelated jitter" backoff (the Architecture
// Blog's "Exponential Backoff And Jitter"): wait₀ = base, waitₙ = min(max, random in
// [base, 3 × waitₙ₋₁]), drawn uniformly to the nanosecond, so every wait is in [base, max].
// base must be > 0 and max at least base (a cap is required: the chain grows without one).
//
// An IntervalFunction sees only the attempt number, not the wait before, so the function draws
// the chain wait₁ … wait_attempt anew at every call and returns its last link: each wait has
// the distribution the decorrelated chain has at that attempt, but the waits of one call are
// independent draws rather than one chain. It costs one random draw per attempt so far; with a
// very large MaxAttempts prefer FullJitterBackoff, which costs one. The draws come from source,
// as in FullJitterBackoff (nil: the top-level generator).
func DecorrelatedJitterBackoff(base, max time.Duration, source rand.Source) (IntervalFunction, error) {
	const fn = "DecorrelatedJitterBackoff"
	if err := checkPositive(fn, "base", base); err != nil {
		return nil, err
	}
	if max < base {
		return nil, fmt.Errorf("retry: %s max must be >= base (%v), got %v", fn, base, max)
	}
	u := drawer(source)
	return func(attempt int) time.Duration {
		wait := base
		for i := 0; i < attempt || i == 0; i++ {
			hi := wait * 3
			if hi/3 != wait { // overflow
				hi = math.MaxInt64
			}
			wait = capAt(base+within(hi-base, u()), max)
		}
		return wait
	}, nil
}

// WithJitter returns f with an absolute jitter added to each of its waits: a wait d becomes one
// drawn uniformly from [max(0, d − jitter), d + jitter], to the nanosecond and saturating at
// the largest time.Duration, where Resilience4j's randomization factor (RandomizedInterval)
// spreads in proportion to d. A negative d (stop retrying) is returned as it is. f must not be
// nil and jitter must be > 0. The draws come from source, as in FullJitterBackoff (nil: the
// top-level generator).
func WithJitter(f IntervalFunction, jitter time.Duration, source rand.Source) (IntervalFunction, error) {
	const fn = "WithJitter"
	if f == nil {
		return nil, fmt.Errorf("retry: %s f must not be nil", fn)
	}
	if err := checkPositive(fn, "jitter", jitter); err != nil {
		return nil, err
	}
	u := drawer(source)
	return func(attempt int) time.Duration {
		d := f(attempt)
		if d < 0 {
			return d
		}
		lo := max(d-jitter, 0)
		hi := d + jitter
		if hi < d { // overflow
			hi = math.MaxInt64
		}
		return lo + within(hi-lo, u())
	}, nil
}

// within returns the point at u ∈ [0, 1) of [0, span], truncated to the nanosecond.
func within(span time.Duration, u float64) time.Duration {
	off := u * float64(span)
	if off >= float64(span) { // u rounds up to 1 at this scale (also keeps the conversion in range)
		return span
	}
	return min(time.Duration(off), span)
}

// exponential returns initial × multiplier^(attempt−1), rounded to the nanosecond. Computing
// the power at once, rather than step by step, keeps a huge attempt cheap.
func exponential(initial time.Duration, multiplier float64, attempt int) time.Duration {
	if attempt <= 1 || multiplier == 1 {
		return initial
	}
	return saturate(math.Round(float64(initial) * math.Pow(multiplier, float64(attempt-1))))
}

// spread returns a wait in [d − δ, d + δ] with δ = trunc(d × factor), at position u ∈ [0, 1)
// of that range. With factor < 1 and d > 0 the result is at least 1ns.
func spread(d time.Duration, factor, u float64) time.Duration {
	delta := time.Duration(float64(d) * factor) // < d in exact arithmetic; rounding may reach d
	if delta >= d {
		delta = d - 1
	}
	lo := d - delta
	hi := d + delta
	if hi < d { // overflow
		hi = math.MaxInt64
	}
	span := hi - lo
	off := u * float64(span)
	if off >= float64(span) { // u rounds up to 1 at this scale (also keeps the conversion in range)
		return hi
	}
	return lo + min(time.Duration(off), span) // float64(span) may round up past span
}

// saturate converts a non-negative number of nanoseconds to a Duration, saturating at the
// largest one (float64(math.MaxInt64) is 2^63, out of range).
func saturate(ns float64) time.Duration {
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}

func capAt(d, max time.Duration) time.Duration {
	if max > 0 && d > max {
		return max
	}
	return d
}

func checkPositive(fn, arg string, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("retry: %s %s must be > 0, got %v", fn, arg, d)
	}
	return nil
}

func checkExponential(fn string, initial time.Duration, multiplier float64, max time.Duration) error {
	if err := checkPositive(fn, "initial", initial); err != nil {
		return err
	}
	if !(multiplier >= 1) || math.IsInf(multiplier, 1) {
		return fmt.Errorf("retry: %s multiplier must be a finite number >= 1, got %v", fn, multiplier)
	}
	if max != 0 && max < initial {
		return fmt.Errorf("retry: %s max must be 0 (no cap) or >= initial (%v), got %v", fn, initial, max)
	}
	return nil
}

func checkJitterBackoff(fn string, base, max time.Duration) error {
	if err := checkPositive(fn, "base", base); err != nil {
		return err
	}
	if max != 0 && max < base {
		return fmt.Errorf("retry: %s max must be 0 (no cap) or >= base (%v), got %v", fn, base, max)
	}
	return nil
}

func checkFactor(fn string, f float64) error {
	if !(f >= 0 && f < 1) {
		return fmt.Errorf("retry: %s randomizationFactor must be in [0, 1), got %v", fn, f)
	}
	return nil
}
