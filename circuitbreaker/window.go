package circuitbreaker

import (
	"sync"
	"time"
)

// outcome is one recorded call as bits, so that a ring slot is one word: zero is an empty
// slot, and every recorded outcome has outcomeCall set.
type outcome uint32

const (
	outcomeCall outcome = 1 << iota
	outcomeFailed
	outcomeSlow
)

// counts aggregates a window: Resilience4j's total number of calls, failed calls, slow calls
// and slow failed calls, the total duration of the calls and of the slow ones among them.
// Successful = calls - failed; slow successful = slow - slowFailed.
type counts struct {
	calls, failed, slow, slowFailed int
	duration, slowDuration          time.Duration
}

func (c *counts) add(o outcome, d time.Duration, sign int) {
	c.calls += sign * int(o&outcomeCall)
	c.duration += time.Duration(sign) * d
	if o&outcomeFailed != 0 {
		c.failed += sign
	}
	if o&outcomeSlow != 0 {
		c.slow += sign
		c.slowDuration += time.Duration(sign) * d
		if o&outcomeFailed != 0 {
			c.slowFailed += sign
		}
	}
}

// sub removes the totals of b from c.
func (c *counts) sub(b counts) {
	c.calls -= b.calls
	c.failed -= b.failed
	c.slow -= b.slow
	c.slowFailed -= b.slowFailed
	c.duration -= b.duration
	c.slowDuration -= b.slowDuration
}

// tally is what a recorded outcome decides on: the window's calls, failed calls and slow
// calls.
type tally struct{ calls, failed, slow int }

func (c *counts) tally() tally { return tally{c.calls, c.failed, c.slow} }

// window is a sliding window of outcomes, guarded by a mutex it shares with the other windows
// of its breaker and with the breaker's CallStats (see CircuitBreaker.rec), so that a call
// records its outcome in one critical section. recordLocked adds one outcome, of a call that
// took d and ended at now (the breaker's clock reading, which a time-based window files it
// under), with the mutex held, and returns the totals that include it; record does the same
// taking the mutex and reading the clock itself; snapshot returns the current totals.
type window interface {
	recordLocked(o outcome, d, now time.Duration) tally
	record(o outcome, d time.Duration) counts
	snapshot() counts
}

// newCountWindow returns a window over the last n outcomes with a mutex of its own.
func newCountWindow(n int) window { return newSharedCountWindow(n, new(sync.Mutex)) }

// newSharedCountWindow returns a window over the last n outcomes guarded by mu.
//
// The mutex is held only while the ring and totals are updated (never across the user's
// call). The breaker decides on the totals that recording returns, so they must be those of an
// exact window: a lock-free ring updated in several atomic steps lets concurrent recorders see
// totals that count outcomes whose evictions are not yet subtracted, and open the breaker on a
// failure rate no window ever had.
func newSharedCountWindow(n int, mu *sync.Mutex) *countWindow {
	return &countWindow{mu: mu, ring: make([]slot, n)}
}

// slot is one call of a count-based window: its outcome and its duration.
type slot struct {
	o outcome
	d time.Duration
}

// countWindow is Resilience4j's FixedSizeSlidingWindowMetrics: a ring of the last n outcomes
// and their running totals.
type countWindow struct {
	mu    *sync.Mutex
	ring  []slot
	head  int
	total counts
}

func (w *countWindow) recordLocked(o outcome, d, _ time.Duration) tally {
	s := &w.ring[w.head]
	if s.o != o || s.o&outcomeSlow != 0 {
		w.total.add(s.o, 0, -1)
		w.total.add(o, 0, 1)
		if s.o&outcomeSlow != 0 {
			w.total.slowDuration -= s.d
		}
		if o&outcomeSlow != 0 {
			w.total.slowDuration += d
		}
	}
	w.total.duration += d - s.d
	s.o, s.d = o, d
	if w.head++; w.head == len(w.ring) {
		w.head = 0
	}
	return w.total.tally()
}

func (w *countWindow) record(o outcome, d time.Duration) counts {
	w.mu.Lock()
	w.recordLocked(o, d, 0)
	t := w.total
	w.mu.Unlock()
	return t
}

func (w *countWindow) snapshot() counts {
	w.mu.Lock()
	t := w.total
	w.mu.Unlock()
	return t
}

// timeWindow is Resilience4j's SlidingTimeWindowMetrics on the monotonic clock: n one-second
// buckets in a ring, the head tagged with the second it covers, counted from the breaker's
// epoch (the instant New ran). Recording and reading first move the head to the current second,
// emptying each bucket it passes, so the window holds the calls of seconds [now-n+1, now] and a
// call recorded during second s leaves when the clock reaches second s+n. The mutex is held only
// while the buckets are touched.
//
// clock returns the time elapsed since the epoch. The window reads no other clock: a step of the
// wall clock cannot keep outcomes in it or drop them early.
type timeWindow struct {
	clock   func() time.Duration
	mu      *sync.Mutex
	buckets []timeBucket
	head    int
	total   counts
}

type timeBucket struct {
	second int64 // seconds since the epoch
	counts
}

// newTimeWindow returns a time-based window of n seconds with a mutex of its own.
func newTimeWindow(n int, clock func() time.Duration) *timeWindow {
	return newSharedTimeWindow(n, clock, new(sync.Mutex))
}

// newSharedTimeWindow returns a time-based window of n seconds guarded by mu.
func newSharedTimeWindow(n int, clock func() time.Duration, mu *sync.Mutex) *timeWindow {
	w := &timeWindow{clock: clock, mu: mu, buckets: make([]timeBucket, n)}
	w.buckets[0].second = w.now()
	return w
}

// now is the current second since the epoch.
func (w *timeWindow) now() int64 { return int64(w.clock() / time.Second) }

// advance moves the head to second now. It is O(1) amortised: each step empties a bucket that
// time has passed, and never more than n of them. The monotonic clock never goes back; a
// reading that did would leave the head where it is.
func (w *timeWindow) advance(now int64) {
	d := now - w.buckets[w.head].second
	if d <= 0 {
		return
	}
	for m := min(d, int64(len(w.buckets))); m > 0; m-- {
		w.head = (w.head + 1) % len(w.buckets)
		b := &w.buckets[w.head]
		w.total.sub(b.counts)
		*b = timeBucket{second: now - m + 1}
	}
}

func (w *timeWindow) record(o outcome, d time.Duration) counts {
	at := w.clock()
	w.mu.Lock()
	w.recordLocked(o, d, at)
	t := w.total
	w.mu.Unlock()
	return t
}

func (w *timeWindow) recordLocked(o outcome, d, at time.Duration) tally {
	w.advance(int64(at / time.Second))
	w.buckets[w.head].add(o, d, 1)
	w.total.add(o, d, 1)
	return w.total.tally()
}

func (w *timeWindow) snapshot() counts {
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance(now)
	return w.total
}

// emptyWindow is the window of DISABLED and FORCED_OPEN (and of an OPEN state entered from
// them): it records nothing and always reads empty.
type emptyWindow struct{}

func (emptyWindow) record(outcome, time.Duration) counts                     { return counts{} }
func (emptyWindow) recordLocked(outcome, time.Duration, time.Duration) tally { return tally{} }
func (emptyWindow) snapshot() counts                                         { return counts{} }
