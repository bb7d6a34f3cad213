package circuitbreaker

import (
	"sync/atomic"
	"time"
)

// circuitState is one period in one state. A transition always installs a new object, even
// into the same state, so "the state that granted this permit" and "the CLOSED period that
// already opened" are identities that compare-and-swap can test.
type circuitState struct {
	kind     State
	attempts int           // openings since the last CLOSED; drives WaitIntervalFunctionInOpenState
	metrics  *stateMetrics // OPEN shares the metrics of the state it came from
	// deadline is when OPEN ends, as time since the breaker's epoch: permission is granted
	// once the monotonic clock is strictly after it.
	deadline time.Duration

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
	notPermitted atomic.Int64
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

func (cb *CircuitBreaker) closedMetrics() *stateMetrics {
	if cb.cfg.SlidingWindowType == TimeBased {
		return &stateMetrics{win: newTimeWindow(cb.cfg.SlidingWindowSize, cb.now), minCalls: cb.cfg.MinimumNumberOfCalls}
	}
	n := cb.cfg.SlidingWindowSize
	return &stateMetrics{win: newCountWindow(n), minCalls: min(cb.cfg.MinimumNumberOfCalls, n)}
}

func (cb *CircuitBreaker) newClosed() *circuitState {
	return &circuitState{kind: Closed, metrics: cb.closedMetrics()}
}

func (cb *CircuitBreaker) newMetricsOnly() *circuitState {
	return &circuitState{kind: MetricsOnly, metrics: cb.closedMetrics()}
}

// newOpen is an OPEN period that ends deadline after the breaker's epoch.
func (cb *CircuitBreaker) newOpen(attempts int, m *stateMetrics, deadline time.Duration) *circuitState {
	return &circuitState{kind: Open, attempts: attempts, metrics: m, deadline: deadline}
}

// newOpenAfter is the OPEN period of an opening that counts as an attempt: by thresholds,
// TransitionToOpenState or the HALF_OPEN maximum wait.
func (cb *CircuitBreaker) newOpenAfter(cur *circuitState) *circuitState {
	a := cur.attempts + 1
	return cb.newOpen(a, cur.metrics, cb.after(cb.cfg.waitInOpenState(a)))
}

// newHalfOpen uses a count-based window of PermittedNumberOfCallsInHalfOpenState whatever the
// configured window type, so its minimum is always capped by the permitted number.
func (cb *CircuitBreaker) newHalfOpen(attempts int) *circuitState {
	n := cb.cfg.PermittedNumberOfCallsInHalfOpenState
	s := &circuitState{kind: HalfOpen, attempts: attempts,
		metrics: &stateMetrics{win: newCountWindow(n), minCalls: min(cb.cfg.MinimumNumberOfCalls, n)},
		slots:   make([]atomic.Uint64, n)}
	s.permits.Store(int64(n))
	return s
}

func (cb *CircuitBreaker) newDisabled() *circuitState {
	return &circuitState{kind: Disabled, metrics: &stateMetrics{win: emptyWindow{}}}
}

func (cb *CircuitBreaker) newForcedOpen(attempts int) *circuitState {
	return &circuitState{kind: ForcedOpen, attempts: attempts, metrics: &stateMetrics{win: emptyWindow{}}}
}
