package circuitbreaker

import "time"

// swap installs next if cur is still the current period, stops cur's timer, publishes the
// transition and then arms next's timer, so that whatever that timer publishes comes after.
// It reports whether it did; a caller that lost publishes nothing.
func (cb *CircuitBreaker) swap(cur, next *circuitState) bool {
	return cb.swapExceeded(cur, next, 0, 0, 0)
}

// swapExceeded is swap for a CLOSED period that opens on its thresholds: the
// *_RATE_EXCEEDED events of v come between the installation and STATE_TRANSITION.
func (cb *CircuitBreaker) swapExceeded(cur, next *circuitState, v verdict, fr, sr float32) bool {
	next.seq = cur.seq + 1 // next is not shared until the swap succeeds
	if !cb.state.CompareAndSwap(cur, next) {
		return false
	}
	cur.leave()
	from, to := cur.kind, next.kind
	cb.gate.deliver(next.seq, func() {
		cb.publishExceeded(v, fr, sr)
		cb.publishTransition(from, to)
	})
	cb.arm(next)
	return true
}

func (cb *CircuitBreaker) arm(s *circuitState) {
	switch {
	case s.kind == Open && !s.ending.Load():
		s.schedule(s.deadline-openClockMargin-cb.now(), func() {
			s.ending.Store(true)
			cb.arm(s) // the automatic transition, if enabled
		})
	case s.kind == Open && s.set.cfg.AutomaticTransitionFromOpenToHalfOpenEnabled:
		s.schedule(s.deadline-cb.now(), func() { cb.openToHalfOpen(s) })
	case s.kind == HalfOpen && s.set.cfg.MaxWaitDurationInHalfOpenState > 0:
		s.schedule(s.set.cfg.MaxWaitDurationInHalfOpenState, func() { cb.halfOpenWaitEnded(s) })
	}
}

// halfOpenWaitEnded leaves HALF_OPEN period s for TransitionToStateAfterWaitDuration, unless
// the probes decided first: OPEN as an opening that counts as an attempt, or a fresh CLOSED.
func (cb *CircuitBreaker) halfOpenWaitEnded(s *circuitState) {
	next := cb.newClosed()
	if s.set.cfg.TransitionToStateAfterWaitDuration == OpenAfterWait {
		next = cb.newOpenAfter(s)
	}
	cb.swap(s, next)
}

func (cb *CircuitBreaker) openToHalfOpen(s *circuitState) {
	cb.swap(s, cb.newHalfOpen(s.attempts))
}

// transition is the manual transition of Resilience4j's stateTransition: it checks the table
// against the current state, builds the next period from it and installs it, retrying if the
// state changed meanwhile. A move to the same state installs a fresh period silently. Every
// TransitionToXxxState method returns ErrNilCircuitBreaker for a nil cb, from here.
func (cb *CircuitBreaker) transition(to State, next func(cur *circuitState) *circuitState) error {
	if cb.unset() {
		return ErrNilCircuitBreaker
	}
	for {
		cur := cb.state.Load()
		if !transitionAllowed(cur.kind, to) {
			return &IllegalStateTransitionError{Name: cb.name, From: cur.kind, To: to}
		}
		if cb.swap(cur, next(cur)) {
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

// TransitionToOpenStateFor opens the breaker for d on the monotonic clock (a d <= 0 ends the
// wait at once), as Resilience4j's transitionToOpenStateFor: the attempt number is not
// incremented. Illegal from METRICS_ONLY.
func (cb *CircuitBreaker) TransitionToOpenStateFor(d time.Duration) error {
	return cb.transition(Open, func(cur *circuitState) *circuitState {
		return cb.newOpen(cur.attempts, cur.metrics, cb.after(d))
	})
}

// TransitionToOpenStateUntil opens the breaker until t, as Resilience4j's
// transitionToOpenStateUntil: permission is granted again once the clock is strictly after t,
// and the attempt number is not incremented. t is turned into a wait once, with time.Until
// (on the monotonic clock when t carries a monotonic reading, as time.Now().Add(d) does);
// the breaker then waits on the monotonic clock, so a later step of the wall clock does not
// move the end. Illegal from METRICS_ONLY.
func (cb *CircuitBreaker) TransitionToOpenStateUntil(t time.Time) error {
	return cb.transition(Open, func(cur *circuitState) *circuitState {
		return cb.newOpen(cur.attempts, cur.metrics, cb.after(time.Until(t)))
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
	if cb.unset() {
		return
	}
	next := cb.newClosed()
	var old *circuitState
	for {
		old = cb.state.Load()
		next.seq = old.seq + 1
		if cb.state.CompareAndSwap(old, next) {
			break
		}
	}
	old.leave()
	from := old.kind
	cb.gate.deliver(next.seq, func() {
		cb.publishTransition(from, Closed)
		if cb.events.Active() {
			cb.publish(Event{Type: EventReset})
		}
	})
}
