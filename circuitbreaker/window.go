package circuitbreaker

import (
	"sync"
	"sync/atomic"
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
// and slow failed calls. Successful = calls - failed; slow successful = slow - slowFailed.
type counts struct {
	calls, failed, slow, slowFailed int
}

func (c *counts) add(o outcome, sign int) {
	c.calls += sign * int(o&outcomeCall)
	if o&outcomeFailed != 0 {
		c.failed += sign
	}
	if o&outcomeSlow != 0 {
		c.slow += sign
		if o&outcomeFailed != 0 {
			c.slowFailed += sign
		}
	}
}

// window is a sliding window of outcomes. record adds one outcome and returns the totals that
// include it; snapshot returns the current totals.
type window interface {
	record(o outcome) counts
	snapshot() counts
}

// newCountWindow returns a window over the last n outcomes. Small windows are lock-free.
func newCountWindow(n int) window {
	if n <= maxLockFreeWindow {
		return &lockFreeCountWindow{ring: make([]atomic.Uint32, n)}
	}
	return &lockedCountWindow{ring: make([]outcome, n)}
}

// maxLockFreeWindow bounds the lock-free window so that its 16-bit counters cannot overflow:
// a counter holds at most the window's n outcomes plus those of recorders that have added
// their outcome but not yet subtracted the evicted one, so half of the 16 bits is headroom
// for 32767 such recorders in flight at the same instant.
const maxLockFreeWindow = 1 << 15

// lockFreeCountWindow is a count-based window without a mutex.
//
// total packs the four counters into one word, 16 bits each (calls, failed, slow, slowFailed
// from the low end), so that one atomic load is a consistent snapshot. A recorder claims a slot
// with head, adds its outcome to total, swaps it into the slot and subtracts what it evicted.
// Adding before subtracting keeps every counter non-negative and failed <= calls in every
// snapshot (total is the ring plus in-flight outcomes, never less); once recorders are
// quiescent the sums are exact, since each outcome is added once and subtracted once.
type lockFreeCountWindow struct {
	ring  []atomic.Uint32
	head  atomic.Uint64
	total atomic.Uint64
}

func pack(o outcome) uint64 {
	p := uint64(o & outcomeCall)
	if o&outcomeFailed != 0 {
		p |= 1 << 16
	}
	if o&outcomeSlow != 0 {
		p |= 1 << 32
		if o&outcomeFailed != 0 {
			p |= 1 << 48
		}
	}
	return p
}

func unpack(t uint64) counts {
	return counts{
		calls:      int(t & 0xffff),
		failed:     int(t >> 16 & 0xffff),
		slow:       int(t >> 32 & 0xffff),
		slowFailed: int(t >> 48),
	}
}

func (w *lockFreeCountWindow) record(o outcome) counts {
	i := (w.head.Add(1) - 1) % uint64(len(w.ring))
	w.total.Add(pack(o))
	old := outcome(w.ring[i].Swap(uint32(o)))
	return unpack(w.total.Add(-pack(old)))
}

func (w *lockFreeCountWindow) snapshot() counts { return unpack(w.total.Load()) }

// lockedCountWindow is the count-based window for sizes the packed counters cannot hold.
type lockedCountWindow struct {
	mu    sync.Mutex
	ring  []outcome
	head  int
	total counts
}

func (w *lockedCountWindow) record(o outcome) counts {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.total.add(w.ring[w.head], -1)
	w.ring[w.head] = o
	w.total.add(o, 1)
	w.head = (w.head + 1) % len(w.ring)
	return w.total
}

func (w *lockedCountWindow) snapshot() counts {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.total
}

// timeWindow is Resilience4j's SlidingTimeWindowMetrics: n per-second buckets in a ring, the
// head tagged with the epoch second of time.Now. Recording and reading first move the head to
// the current second, emptying each bucket it passes, so the window holds the calls of seconds
// [now-n+1, now] and a call recorded at second s leaves when the clock reaches s+n. The mutex
// is held only while the buckets are touched.
type timeWindow struct {
	mu      sync.Mutex
	buckets []timeBucket
	head    int
	total   counts
}

type timeBucket struct {
	second int64
	counts
}

func newTimeWindow(n int) *timeWindow {
	w := &timeWindow{buckets: make([]timeBucket, n)}
	w.buckets[0].second = time.Now().Unix()
	return w
}

// advance moves the head to second now. It is O(1) amortised: each step empties a bucket
// that time has passed, and never more than n of them. A clock that went back leaves the
// head where it is, so outcomes are never lost to a wall-clock step.
func (w *timeWindow) advance(now int64) {
	d := now - w.buckets[w.head].second
	if d <= 0 {
		return
	}
	for m := min(d, int64(len(w.buckets))); m > 0; m-- {
		w.head = (w.head + 1) % len(w.buckets)
		b := &w.buckets[w.head]
		w.total.calls -= b.calls
		w.total.failed -= b.failed
		w.total.slow -= b.slow
		w.total.slowFailed -= b.slowFailed
		*b = timeBucket{second: now - m + 1}
	}
}

func (w *timeWindow) record(o outcome) counts {
	now := time.Now().Unix()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance(now)
	w.buckets[w.head].add(o, 1)
	w.total.add(o, 1)
	return w.total
}

func (w *timeWindow) snapshot() counts {
	now := time.Now().Unix()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance(now)
	return w.total
}

// emptyWindow is the window of DISABLED and FORCED_OPEN (and of an OPEN state entered from
// them): it records nothing and always reads empty.
type emptyWindow struct{}

func (emptyWindow) record(outcome) counts { return counts{} }
func (emptyWindow) snapshot() counts      { return counts{} }
