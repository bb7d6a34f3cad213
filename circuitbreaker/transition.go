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
	deadline time.Time     // OPEN: permission is granted once time.Now() is after it
	permits  atomic.Int64  // HALF_OPEN: probe permits left

	// METRICS_ONLY publishes each *_RATE_EXCEEDED event once per period.
	failureRateExceeded, slowCallRateExceeded atomic.Bool

	// timer is the automatic transition out of this period (OPEN→HALF_OPEN, or HALF_OPEN→OPEN
	// after MaxWaitDurationInHalfOpenState). It is armed after the period is installed and
	// stopped when the period is left; left closes the race between the two (see schedule).
	// A timer that fires anyway does nothing, since it only moves the breaker from its own
	// period.
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

func (s *circuitState) takePermit() bool {
	for {
		p := s.permits.Load()
		if p <= 0 {
			return false
		}
		if s.permits.CompareAndSwap(p, p-1) {
			return true
		}
	}
}

func (s *circuitState) release() {
	if s.kind == HalfOpen {
		s.permits.Add(1)
	}
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
		return &stateMetrics{win: newTimeWindow(cb.cfg.SlidingWindowSize), minCalls: cb.cfg.MinimumNumberOfCalls}
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

func (cb *CircuitBreaker) newOpen(attempts int, m *stateMetrics, deadline time.Time) *circuitState {
	return &circuitState{kind: Open, attempts: attempts, metrics: m, deadline: deadline}
}

// newOpenAfter is the OPEN period of an opening that counts as an attempt: by thresholds,
// TransitionToOpenState or the HALF_OPEN maximum wait.
func (cb *CircuitBreaker) newOpenAfter(cur *circuitState) *circuitState {
	a := cur.attempts + 1
	return cb.newOpen(a, cur.metrics, time.Now().Add(cb.cfg.waitInOpenState(a)))
}

// newHalfOpen uses a count-based window of PermittedNumberOfCallsInHalfOpenState whatever the
// configured window type, so its minimum is always capped by the permitted number.
func (cb *CircuitBreaker) newHalfOpen(attempts int) *circuitState {
	n := cb.cfg.PermittedNumberOfCallsInHalfOpenState
	s := &circuitState{kind: HalfOpen, attempts: attempts,
		metrics: &stateMetrics{win: newCountWindow(n), minCalls: min(cb.cfg.MinimumNumberOfCalls, n)}}
	s.permits.Store(int64(n))
	return s
}

func (cb *CircuitBreaker) newDisabled() *circuitState {
	return &circuitState{kind: Disabled, metrics: &stateMetrics{win: emptyWindow{}}}
}

func (cb *CircuitBreaker) newForcedOpen(attempts int) *circuitState {
	return &circuitState{kind: ForcedOpen, attempts: attempts, metrics: &stateMetrics{win: emptyWindow{}}}
}

// swap installs next if cur is still the current period, then stops cur's timer and arms
// next's. It reports whether it did; a caller that lost publishes nothing.
func (cb *CircuitBreaker) swap(cur, next *circuitState) bool {
	if !cb.state.CompareAndSwap(cur, next) {
		return false
	}
	cur.leave()
	cb.arm(next)
	return true
}

func (cb *CircuitBreaker) arm(s *circuitState) {
	switch {
	case s.kind == Open && cb.cfg.AutomaticTransitionFromOpenToHalfOpenEnabled:
		s.schedule(time.Until(s.deadline), func() { cb.openToHalfOpen(s) })
	case s.kind == HalfOpen && cb.cfg.MaxWaitDurationInHalfOpenState > 0:
		s.schedule(cb.cfg.MaxWaitDurationInHalfOpenState, func() {
			if cb.swap(s, cb.newOpenAfter(s)) {
				cb.publishTransition(HalfOpen, Open)
			}
		})
	}
}

func (cb *CircuitBreaker) openToHalfOpen(s *circuitState) {
	if cb.swap(s, cb.newHalfOpen(s.attempts)) {
		cb.publishTransition(Open, HalfOpen)
	}
}

// transition is the manual transition of Resilience4j's stateTransition: it checks the table
// against the current state, builds the next period from it and installs it, retrying if the
// state changed meanwhile. A move to the same state installs a fresh period silently. Every
// TransitionToXxxState method returns ErrNilCircuitBreaker for a nil cb, from here.
func (cb *CircuitBreaker) transition(to State, next func(cur *circuitState) *circuitState) error {
	if cb == nil {
		return ErrNilCircuitBreaker
	}
	for {
		cur := cb.state.Load()
		if !transitionAllowed(cur.kind, to) {
			return &IllegalStateTransitionError{Name: cb.name, From: cur.kind, To: to}
		}
		if cb.swap(cur, next(cur)) {
			cb.publishTransition(cur.kind, to)
			return nil
		}
	}
}

// TransitionToClosedState moves the breaker to CLOSED with a fresh window and resets the
// opening attempts, as Resilience4j's transitionToClosedState. Legal from every state.
func (cb *CircuitBreaker) TransitionToClosedState() error {
	return cb.transition(Closed, func(*circuitState) *circuitState { return cb.newClosed() })
}

// TransitionToOpenState opens the breaker as if its thresholds had been exceeded, as
// Resilience4j's transitionToOpenState: the attempt number grows by one and the wait comes
// from WaitDurationInOpenState or WaitIntervalFunctionInOpenState. OPEN keeps the metrics of
// the state it leaves. Illegal from METRICS_ONLY.
func (cb *CircuitBreaker) TransitionToOpenState() error {
	return cb.transition(Open, cb.newOpenAfter)
}

// TransitionToOpenStateFor opens the breaker for d (a d <= 0 ends the wait at once), as
// Resilience4j's transitionToOpenStateFor: the attempt number is not incremented. Illegal
// from METRICS_ONLY.
func (cb *CircuitBreaker) TransitionToOpenStateFor(d time.Duration) error {
	return cb.TransitionToOpenStateUntil(time.Now().Add(d))
}

// TransitionToOpenStateUntil opens the breaker until t, as Resilience4j's
// transitionToOpenStateUntil: permission is granted again once time.Now() is after t, and the
// attempt number is not incremented. Illegal from METRICS_ONLY.
func (cb *CircuitBreaker) TransitionToOpenStateUntil(t time.Time) error {
	return cb.transition(Open, func(cur *circuitState) *circuitState {
		return cb.newOpen(cur.attempts, cur.metrics, t)
	})
}

// TransitionToHalfOpenState moves the breaker to HALF_OPEN with a fresh probe budget and
// window, keeping the attempt number, as Resilience4j's transitionToHalfOpenState. Illegal
// from CLOSED and METRICS_ONLY.
func (cb *CircuitBreaker) TransitionToHalfOpenState() error {
	return cb.transition(HalfOpen, func(cur *circuitState) *circuitState { return cb.newHalfOpen(cur.attempts) })
}

// TransitionToDisabledState moves the breaker to DISABLED: every call permitted, nothing
// recorded, only STATE_TRANSITION and RESET events published. Legal from every state.
func (cb *CircuitBreaker) TransitionToDisabledState() error {
	return cb.transition(Disabled, func(*circuitState) *circuitState { return cb.newDisabled() })
}

// TransitionToMetricsOnlyState moves the breaker to METRICS_ONLY: every call permitted and
// recorded in a fresh window, events published (each *_RATE_EXCEEDED once per period), but
// the breaker never opens. Legal from every state.
func (cb *CircuitBreaker) TransitionToMetricsOnlyState() error {
	return cb.transition(MetricsOnly, func(*circuitState) *circuitState { return cb.newMetricsOnly() })
}

// TransitionToForcedOpenState moves the breaker to FORCED_OPEN: every call refused (and
// counted as not permitted), nothing recorded, only STATE_TRANSITION and RESET events
// published. The attempt number grows by one, as Resilience4j. Legal from every state.
func (cb *CircuitBreaker) TransitionToForcedOpenState() error {
	return cb.transition(ForcedOpen, func(cur *circuitState) *circuitState { return cb.newForcedOpen(cur.attempts + 1) })
}

// Reset puts the breaker in a fresh CLOSED state from any state, bypassing the transition
// table, as Resilience4j's reset: it publishes STATE_TRANSITION when the state was not CLOSED,
// then RESET. On a nil cb it does nothing.
func (cb *CircuitBreaker) Reset() {
	if cb == nil {
		return
	}
	next := cb.newClosed()
	old := cb.state.Swap(next)
	old.leave()
	cb.publishTransition(old.kind, Closed)
	if cb.events.Active() {
		cb.publish(Event{Type: EventReset})
	}
}
