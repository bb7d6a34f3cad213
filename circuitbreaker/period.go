package circuitbreaker

import (
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// circuitState is one period in one state. A transition always installs a new object, even
// into the same state, so "the state that granted this permit" and "the CLOSED period that
// already opened" are identities that compare-and-swap can test.
type circuitState struct {
	kind     State
	coarse   bool          // calls may start from the shared reading (see clock.go)
	seq      uint64        // the number of the transition that installed it (New's: 0)
	set      *settings     // the config this period was built with, for its whole life
	attempts int           // openings since the last CLOSED; drives WaitIntervalFunctionInOpenState
	metrics  *stateMetrics // OPEN shares the metrics of the state it came from
	// deadline is when OPEN ends, as time since the breaker's epoch: permission is granted
	// once the monotonic clock is strictly after it. Until the last openClockMargin of the
	// wait, a timer knows the wait cannot be over, so refusals read no clock at all; ending
	// becomes true when that timer fires (at once for a shorter wait), and from then on each
	// permission request compares the clock with deadline.
	deadline time.Duration
	ending   atomic.Bool

	// HALF_OPEN's probe budget. permits counts the probes still to grant. Each granted probe
	// holds one of the slots, so that a Permit completed twice (or released after its outcome)
	// is recognised and cannot hand the period a permit it never lent; see probe.
	permits atomic.Int64
	slots   []atomic.Uint64
	cursor  atomic.Uint32 // where the next probe starts looking for a free slot

	// METRICS_ONLY publishes each *_RATE_EXCEEDED event once per period.
	failureRateExceeded, slowCallRateExceeded atomic.Bool

	// timer is the automatic transition out of this period (OPEN→HALF_OPEN, or HALF_OPEN's
	// exit after MaxWaitDurationInHalfOpenState). It is armed after the period is installed
	// and stopped when the period is left; left closes the race between the two (see
	// schedule). A timer that fires anyway does nothing, since it only moves the breaker from
	// its own period.
	timer atomic.Pointer[time.Timer]
	left  atomic.Bool
}

// stateMetrics is Resilience4j's CircuitBreakerMetrics: a window, the minimum number of calls
// before rates count, and the not-permitted counter (not windowed).
type stateMetrics struct {
	win          window
	minCalls     int
	notPermitted stripedCounter
}

// stripedCounter is a counter that every refusal increments. Refusals come in floods from
// every goroutine at once while the breaker is open; one shared word would make each of them
// wait for its cache line, so each increment goes to one of several padded stripes and reads
// add them up. The stripe is picked from bits of a clock reading the caller already has
// (addAt), or at random (add: a per-thread generator, no shared state).
type stripedCounter struct {
	stripes [counterStripes]struct {
		n atomic.Int64
		_ [56]byte // a stripe per 64-byte cache line
	}
}

const counterStripes = 8

func (c *stripedCounter) add() { c.stripes[rand.Uint32()%counterStripes].n.Add(1) }

// addAt increments the stripe that bits of the nanosecond reading now select: two goroutines
// rarely read the clock within the same few nanoseconds.
func (c *stripedCounter) addAt(now time.Duration) {
	h := uint64(now)
	c.stripes[(h^h>>3^h>>6^h>>9)%counterStripes].n.Add(1)
}

func (c *stripedCounter) load() int64 {
	var n int64
	for i := range c.stripes {
		n += c.stripes[i].n.Load()
	}
	return n
}

// A HALF_OPEN slot word is a generation (bits 2 and up) and a slot state (bits 0-1). The
// generation grows each time a released probe frees its slot, so a stale Permit that still
// names the slot no longer matches it.
const (
	slotFree  = 0
	slotTaken = 1
	slotDone  = 2
	slotState = 3
)

// takeProbe grants one HALF_OPEN probe: it takes one of the permits, then claims a free slot
// for it and returns the slot and the word a completion must find there. A free slot always
// exists for a taken permit, since a slot is freed before its permit is given back.
func (s *circuitState) takeProbe() (slot uint32, word uint64, ok bool) {
	for {
		p := s.permits.Load()
		if p <= 0 {
			return 0, 0, false
		}
		if s.permits.CompareAndSwap(p, p-1) {
			break
		}
	}
	n := uint32(len(s.slots))
	for i := s.cursor.Add(1); ; i++ {
		slot := &s.slots[i%n]
		if w := slot.Load(); w&slotState == slotFree && slot.CompareAndSwap(w, w|slotTaken) {
			return i % n, w | slotTaken, true
		}
	}
}

// finishProbe marks a probe's outcome as reported and reports whether this was the first
// report: a probe whose permit was already completed records nothing more.
func (s *circuitState) finishProbe(slot uint32, word uint64) bool {
	return s.slots[slot].CompareAndSwap(word, word&^slotState|slotDone)
}

// releaseProbe hands a probe's permit back to its period, once: the slot is freed under a new
// generation before the permit is counted again.
func (s *circuitState) releaseProbe(slot uint32, word uint64) bool {
	if !s.slots[slot].CompareAndSwap(word, (word>>2+1)<<2|slotFree) {
		return false
	}
	s.permits.Add(1)
	return true
}

func (s *circuitState) schedule(d time.Duration, f func()) {
	t := time.AfterFunc(d, f)
	s.timer.Store(t)
	if s.left.Load() { // left between installation and now: leave saw no timer to stop
		t.Stop()
	}
}

func (s *circuitState) leave() {
	s.left.Store(true)
	if t := s.timer.Load(); t != nil {
		t.Stop()
	}
}

func (cb *CircuitBreaker) closedMetrics(c *Config) *stateMetrics {
	if c.SlidingWindowType == TimeBased {
		return &stateMetrics{win: newSharedTimeWindow(c.SlidingWindowSize, cb.now, &cb.rec), minCalls: c.MinimumNumberOfCalls}
	}
	n := c.SlidingWindowSize
	return &stateMetrics{win: newSharedCountWindow(n, &cb.rec), minCalls: min(c.MinimumNumberOfCalls, n)}
}

// The constructors below build a period with the config in force now (see ChangeConfig).

func (cb *CircuitBreaker) newClosed() *circuitState {
	set := cb.settings.Load()
	return &circuitState{kind: Closed, set: set, metrics: cb.closedMetrics(&set.cfg), coarse: cb.coarse(set)}
}

func (cb *CircuitBreaker) newMetricsOnly() *circuitState {
	set := cb.settings.Load()
	return &circuitState{kind: MetricsOnly, set: set, metrics: cb.closedMetrics(&set.cfg), coarse: cb.coarse(set)}
}

// openClockMargin is the last part of an OPEN wait during which refusals read the clock. A
// timer that fires this much before the end, which no scheduling delay makes late by as
// much, tells the refusals before it that the wait is not over.
const openClockMargin = time.Second

// newOpen is an OPEN period that ends deadline after the breaker's epoch.
func (cb *CircuitBreaker) newOpen(attempts int, m *stateMetrics, deadline time.Duration) *circuitState {
	s := &circuitState{kind: Open, set: cb.settings.Load(), attempts: attempts, metrics: m, deadline: deadline}
	if deadline-cb.now() <= 2*openClockMargin {
		s.ending.Store(true)
	}
	return s
}

// newOpenAfter is the OPEN period of an opening that counts as an attempt: by thresholds,
// TransitionToOpenState or the HALF_OPEN maximum wait.
func (cb *CircuitBreaker) newOpenAfter(cur *circuitState) *circuitState {
	a := cur.attempts + 1
	return cb.newOpen(a, cur.metrics, cb.after(cb.settings.Load().cfg.waitInOpenState(a)))
}

// newHalfOpen uses a count-based window of PermittedNumberOfCallsInHalfOpenState whatever the
// configured window type, so its minimum is always capped by the permitted number.
func (cb *CircuitBreaker) newHalfOpen(attempts int) *circuitState {
	set := cb.settings.Load()
	n := set.cfg.PermittedNumberOfCallsInHalfOpenState
	s := &circuitState{kind: HalfOpen, set: set, attempts: attempts, coarse: cb.coarse(set),
		metrics: &stateMetrics{win: newSharedCountWindow(n, &cb.rec), minCalls: min(set.cfg.MinimumNumberOfCalls, n)},
		slots:   make([]atomic.Uint64, n)}
	s.permits.Store(int64(n))
	return s
}

func (cb *CircuitBreaker) newDisabled() *circuitState {
	set := cb.settings.Load()
	return &circuitState{kind: Disabled, set: set, metrics: &stateMetrics{win: emptyWindow{}}, coarse: cb.coarse(set)}
}

// coarse reports whether the calls of a period built with set may start from the shared
// reading (see clock.go).
func (cb *CircuitBreaker) coarse(set *settings) bool {
	return cb.calls.coarse(set.cfg.SlowCallDurationThreshold)
}

func (cb *CircuitBreaker) newForcedOpen(attempts int) *circuitState {
	return &circuitState{kind: ForcedOpen, set: cb.settings.Load(), attempts: attempts, metrics: &stateMetrics{win: emptyWindow{}}}
}
