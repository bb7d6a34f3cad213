package retry

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// IntervalFunction returns the wait before a retry, given attempt, the number of failed
// attempts so far: 1 before the first retry, 2 before the second, and so on. A negative result
// stops retrying (the call ends with the last outcome). It must be safe for concurrent use.
// As Resilience4j's IntervalFunction (there in milliseconds).
type IntervalFunction func(attempt int) time.Duration

// IntervalBiFunction is an IntervalFunction that also sees the outcome that caused the retry:
// err is the failed attempt's error, or nil when the retry was caused by result matching
// RetryOnResultPredicate (then result is that value). As Resilience4j's IntervalBiFunction.
type IntervalBiFunction func(attempt int, err error, result any) time.Duration

// The constructors below reproduce Resilience4j's IntervalFunction arithmetic exactly: values
// are whole milliseconds (a Duration argument's sub-millisecond part is dropped, as
// Duration.toMillis), each exponential step truncates, and a base interval below 1ms is refused.
// They return an error, never panic, on a bad argument. An attempt below 1 is taken as 1.

// maxMillis is the largest whole number of milliseconds a time.Duration holds; results saturate
// there as Java's long saturates at Long.MAX_VALUE.
const maxMillis = math.MaxInt64 / int64(time.Millisecond)

// uniform returns U in [0, 1) for the randomized intervals; tests replace it.
var uniform = rand.Float64

// FixedInterval returns a function giving d before every retry, as Resilience4j's
// IntervalFunction.of(interval). d must be at least 1ms.
func FixedInterval(d time.Duration) (IntervalFunction, error) {
	ms, err := baseMillis("FixedInterval", "interval", d)
	if err != nil {
		return nil, err
	}
	return func(int) time.Duration { return millis(ms) }, nil
}

// ExponentialBackoff returns a function giving initial before the first retry and, for each
// later one, the previous interval times multiplier truncated to whole milliseconds, capped at
// max (0: no cap). As Resilience4j's IntervalFunction.ofExponentialBackoff(initial, multiplier,
// max): initial 500ms with multiplier 1.5 gives 500, 750, 1125, 1687, 2530ms.
//
// initial must be at least 1ms, multiplier a finite number >= 1 (Resilience4j accepts smaller
// ones; a backoff that shrinks towards zero is refused here), and max 0 or at least 1ms.
func ExponentialBackoff(initial time.Duration, multiplier float64, max time.Duration) (IntervalFunction, error) {
	base, err := baseMillis("ExponentialBackoff", "initial interval", initial)
	if err != nil {
		return nil, err
	}
	if err := checkMultiplier("ExponentialBackoff", multiplier); err != nil {
		return nil, err
	}
	capMs, err := maxIntervalMillis("ExponentialBackoff", max)
	if err != nil {
		return nil, err
	}
	return func(attempt int) time.Duration {
		return millis(exponential(base, multiplier, attempt, capMs))
	}, nil
}

// RandomizedInterval returns a function giving d spread at random by randomizationFactor before
// every retry: trunc(max(1, lo + U·(hi − lo + 1))) ms with lo = d·(1−factor), hi = d·(1+factor)
// and U uniform in [0, 1), as Resilience4j's IntervalFunction.ofRandomized. d must be at least
// 1ms and randomizationFactor in [0, 1] (0 gives d exactly).
func RandomizedInterval(d time.Duration, randomizationFactor float64) (IntervalFunction, error) {
	ms, err := baseMillis("RandomizedInterval", "interval", d)
	if err != nil {
		return nil, err
	}
	if err := checkFactor("RandomizedInterval", randomizationFactor); err != nil {
		return nil, err
	}
	return func(int) time.Duration {
		return millis(randomize(ms, randomizationFactor))
	}, nil
}

// ExponentialRandomBackoff returns ExponentialBackoff's interval (without its cap) spread at
// random as RandomizedInterval, then capped at max (0: no cap), as Resilience4j's
// IntervalFunction.ofExponentialRandomBackoff: the cap applies after randomization. Arguments
// are checked as in ExponentialBackoff and RandomizedInterval.
func ExponentialRandomBackoff(initial time.Duration, multiplier, randomizationFactor float64, max time.Duration) (IntervalFunction, error) {
	const name = "ExponentialRandomBackoff"
	base, err := baseMillis(name, "initial interval", initial)
	if err != nil {
		return nil, err
	}
	if err := checkMultiplier(name, multiplier); err != nil {
		return nil, err
	}
	if err := checkFactor(name, randomizationFactor); err != nil {
		return nil, err
	}
	capMs, err := maxIntervalMillis(name, max)
	if err != nil {
		return nil, err
	}
	return func(attempt int) time.Duration {
		v := randomize(exponential(base, multiplier, attempt, 0), randomizationFactor)
		if capMs > 0 && v > capMs {
			v = capMs
		}
		return millis(v)
	}, nil
}

// exponential applies x ← trunc(x × multiplier) attempt−1 times to base, then caps at capMs
// when it is positive. The loop stops early at a fixed point (x no longer grows), at
// saturation, or once past a cap, since multiplier >= 1 never brings x back down.
func exponential(base int64, multiplier float64, attempt int, capMs int64) int64 {
	x := base
	for i := 1; i < attempt; i++ {
		if capMs > 0 && x >= capMs {
			break
		}
		next := truncMillis(float64(x) * multiplier)
		if next == x {
			break
		}
		x = next
		if x == maxMillis {
			break
		}
	}
	if capMs > 0 && x > capMs {
		x = capMs
	}
	return x
}

// randomize spreads current by factor as Resilience4j's IntervalFunction: the +1 makes the upper
// bound reachable after truncation, and the result is never below 1ms.
func randomize(current int64, factor float64) int64 {
	c := float64(current)
	delta := factor * c
	lo, hi := c-delta, c+delta
	return truncMillis(math.Max(1, lo+uniform()*(hi-lo+1)))
}

// truncMillis truncates v towards zero, saturating at maxMillis as Java's (long) cast saturates.
func truncMillis(v float64) int64 {
	if v >= float64(maxMillis) {
		return maxMillis
	}
	return int64(v)
}

func millis(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

func baseMillis(fn, arg string, d time.Duration) (int64, error) {
	ms := d.Milliseconds()
	if ms < 1 {
		return 0, fmt.Errorf("retry: %s %s must be >= 1ms, got %v", fn, arg, d)
	}
	return ms, nil
}

func maxIntervalMillis(fn string, max time.Duration) (int64, error) {
	if max == 0 {
		return 0, nil
	}
	ms := max.Milliseconds()
	if ms < 1 {
		return 0, fmt.Errorf("retry: %s max interval must be 0 (no cap) or >= 1ms, got %v", fn, max)
	}
	return ms, nil
}

func checkMultiplier(fn string, m float64) error {
	if !(m >= 1) || math.IsInf(m, 1) {
		return fmt.Errorf("retry: %s multiplier must be a finite number >= 1, got %v", fn, m)
	}
	return nil
}

func checkFactor(fn string, f float64) error {
	if !(f >= 0 && f <= 1) {
		return fmt.Errorf("retry: %s randomization factor must be in [0, 1], got %v", fn, f)
	}
	return nil
}
