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

// Every randomized interval (RandomizedInterval, ExponentialRandomBackoff, FullJitterBackoff,
// DecorrelatedJitterBackoff, WithJitter) takes its draws from a source given as its last
// argument, a math/rand/v2 Source such as rand.NewPCG(1, 2), as the chaos package's
// Config.Source: a seeded source makes the waits the same on every run with the same order of
// retries. Each draw is u = rand.New(source).Float64(), uniform in [0, 1), and each function's
// comment gives its formula in u. The returned function uses source under a mutex of its own, so
// source need not be safe for concurrent use, but it must not be used elsewhere. A nil source
// means math/rand/v2's top-level generator (randomly seeded, safe for concurrent use, no lock).

// uniform returns u in [0, 1) for the randomized intervals given no Source; tests replace it.
var uniform = rand.Float64

// drawer returns the function giving u in [0, 1) from source, or from uniform when source is nil.
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

// ExponentialBackoff returns a function giving interval × multiplier^(attempt−1), rounded to the
// nanosecond and capped at max (0: no cap), as Resilience4j's
// IntervalFunction.ofExponentialBackoff(initialInterval, multiplier, maxInterval): interval
// 500ms with multiplier 1.5 gives 500ms, 750ms, 1.125s, 1.6875s, 2.53125s. interval is the first
// wait, named as in every interval constructor of this package.
//
// interval must be > 0, multiplier a finite number >= 1 (a backoff that shrinks is refused) and
// max 0 or at least interval.
func ExponentialBackoff(interval time.Duration, multiplier float64, max time.Duration) (IntervalFunction, error) {
	const fn = "ExponentialBackoff"
	if err := checkExponential(fn, interval, multiplier, max); err != nil {
		return nil, err
	}
	return func(attempt int) time.Duration {
		return capAt(exponential(interval, multiplier, attempt), max)
	}, nil
}

// RandomizedInterval returns a function giving interval spread at random before every retry,
// as Resilience4j's IntervalFunction.ofRandomized(interval, randomizationFactor): with
// δ = trunc(interval × randomizationFactor) and u uniform in [0, 1) drawn from source, each
// wait is
//
//	(interval − δ) + trunc(u × 2δ)
//
// that is interval × (1 + randomizationFactor × (2u − 1)) to the nanosecond: a wait in
// [interval − δ, interval + δ]. interval must be > 0 and randomizationFactor in [0, 1), so
// the wait is never 0; factor 0 gives interval exactly and draws nothing that matters. source
// is used as in every randomized interval of this package (nil: math/rand/v2's top-level
// generator).
func RandomizedInterval(interval time.Duration, randomizationFactor float64, source rand.Source) (IntervalFunction, error) {
	const fn = "RandomizedInterval"
	if err := checkPositive(fn, "interval", interval); err != nil {
		return nil, err
	}
	if err := checkFactor(fn, randomizationFactor); err != nil {
		return nil, err
	}
	u := drawer(source)
	return func(int) time.Duration {
		return spread(interval, randomizationFactor, u())
	}, nil
}

// ExponentialRandomBackoff returns ExponentialBackoff's interval (before its cap) spread at
// random as RandomizedInterval, then capped at max (0: no cap), as Resilience4j's
// IntervalFunction.ofExponentialRandomBackoff(initialInterval, multiplier,
// randomizationFactor, maxInterval). With d = interval × multiplier^(attempt−1) rounded to the
// nanosecond, δ = trunc(d × randomizationFactor) and u uniform in [0, 1) drawn from source,
// each wait is
//
//	min(max, (d − δ) + trunc(u × 2δ))
//
// that is d × (1 + randomizationFactor × (2u − 1)), capped: the cap applies after the spread,
// so waits near the cap are max itself. Arguments are checked as in ExponentialBackoff and
// RandomizedInterval, and source is used as in every randomized interval of this package (nil:
// math/rand/v2's top-level generator).
func ExponentialRandomBackoff(interval time.Duration, multiplier, randomizationFactor float64, max time.Duration, source rand.Source) (IntervalFunction, error) {
	const fn = "ExponentialRandomBackoff"
	if err := checkExponential(fn, interval, multiplier, max); err != nil {
		return nil, err
	}
	if err := checkFactor(fn, randomizationFactor); err != nil {
		return nil, err
	}
	u := drawer(source)
	return func(attempt int) time.Duration {
		d := exponential(interval, multiplier, attempt)
		return capAt(spread(d, randomizationFactor, u()), max)
	}, nil
}

// FullJitterBackoff returns AWS's "full jitter" backoff (the Architecture Blog's "Exponential
// Backoff And Jitter", where interval is called base): with u uniform in [0, 1) drawn from
// source, each wait is
//
//	trunc(u × min(max, interval × 2^(attempt−1)))
//
// a wait in [0, min(max, interval × 2^(attempt−1))] to the nanosecond, so the first retry
// waits up to interval, the second up to 2 × interval, and so on. Waits may be 0 (retry at
// once): spreading the retries of many callers over the whole range is the point. interval must
// be > 0 and max 0 (no cap) or at least interval.
//
// source is used as in every randomized interval of this package: a seeded one makes the waits
// repeatable, nil means math/rand/v2's top-level generator.
func FullJitterBackoff(interval, max time.Duration, source rand.Source) (IntervalFunction, error) {
	const fn = "FullJitterBackoff"
	if err := checkJitterBackoff(fn, interval, max); err != nil {
		return nil, err
	}
	u := drawer(source)
	return func(attempt int) time.Duration {
		return within(capAt(exponential(interval, 2, attempt), max), u())
	}, nil
}

// DecorrelatedJitterBackoff returns AWS's "decorrelated jitter" backoff (the Architecture
// Blog's "Exponential Backoff And Jitter", where interval is called base): with a fresh u
// uniform in [0, 1) drawn from source for each link,
//
//	wait₀ = interval
//	waitₙ = min(max, interval + trunc(u × (3 × waitₙ₋₁ − interval)))
//
// so every wait is in [interval, max]. interval must be > 0 and max at least interval (a cap is
// required: the chain grows without one).
//
// An IntervalFunction sees only the attempt number, not the wait before, so the function draws
// the chain wait₁ … wait_attempt anew at every call and returns its last link: each wait has
// the distribution the decorrelated chain has at that attempt, but the waits of one call are
// independent draws rather than one chain. It costs one random draw per attempt so far; with a
// very large MaxAttempts prefer FullJitterBackoff, which costs one. source is used as in every
// randomized interval of this package (nil: math/rand/v2's top-level generator).
func DecorrelatedJitterBackoff(interval, max time.Duration, source rand.Source) (IntervalFunction, error) {
	const fn = "DecorrelatedJitterBackoff"
	if err := checkPositive(fn, "interval", interval); err != nil {
		return nil, err
	}
	if max < interval {
		return nil, fmt.Errorf("retry: %s max must be >= interval (%v), got %v", fn, interval, max)
	}
	u := drawer(source)
	return func(attempt int) time.Duration {
		wait := interval
		for i := 0; i < attempt || i == 0; i++ {
			hi := wait * 3
			if hi/3 != wait { // overflow
				hi = math.MaxInt64
			}
			wait = capAt(interval+within(hi-interval, u()), max)
		}
		return wait
	}, nil
}

// WithJitter returns f with an absolute jitter added to each of its waits, where Resilience4j's
// randomization factor (RandomizedInterval) spreads in proportion to the wait: with d = f(attempt),
// lo = max(0, d − jitter), hi = d + jitter (saturating at the largest time.Duration) and u
// uniform in [0, 1) drawn from source, each wait is
//
//	lo + trunc(u × (hi − lo))
//
// A negative d (stop retrying) is returned as it is, with no draw. f must not be nil and jitter
// must be > 0. source is used as in every randomized interval of this package (nil: math/rand/v2's
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

// exponential returns interval × multiplier^(attempt−1), rounded to the nanosecond. Computing
// the power at once, rather than step by step, keeps a huge attempt cheap.
func exponential(interval time.Duration, multiplier float64, attempt int) time.Duration {
	if attempt <= 1 || multiplier == 1 {
		return interval
	}
	return saturate(math.Round(float64(interval) * math.Pow(multiplier, float64(attempt-1))))
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

func checkExponential(fn string, interval time.Duration, multiplier float64, max time.Duration) error {
	if err := checkPositive(fn, "interval", interval); err != nil {
		return err
	}
	if !(multiplier >= 1) || math.IsInf(multiplier, 1) {
		return fmt.Errorf("retry: %s multiplier must be a finite number >= 1, got %v", fn, multiplier)
	}
	if max != 0 && max < interval {
		return fmt.Errorf("retry: %s max must be 0 (no cap) or >= interval (%v), got %v", fn, interval, max)
	}
	return nil
}

func checkJitterBackoff(fn string, interval, max time.Duration) error {
	if err := checkPositive(fn, "interval", interval); err != nil {
		return err
	}
	if max != 0 && max < interval {
		return fmt.Errorf("retry: %s max must be 0 (no cap) or >= interval (%v), got %v", fn, interval, max)
	}
	return nil
}

func checkFactor(fn string, f float64) error {
	if !(f >= 0 && f < 1) {
		return fmt.Errorf("retry: %s randomizationFactor must be in [0, 1), got %v", fn, f)
	}
	return nil
}
