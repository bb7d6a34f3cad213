package leveetest

import (
	"testing"

	"github.com/levee-go/levee/circuitbreaker"
)

// ForceState moves cb to state s through its public transition methods, as a test of code
// behind the breaker needs it (Resilience4j's transitionToXxxState), and fails the test at once
// (t.Fatalf) when it cannot. Every state is reachable from every other: HALF_OPEN is entered
// through OPEN, and OPEN or HALF_OPEN from METRICS_ONLY through CLOSED, since the breaker refuses
// those transitions directly. Each intermediate transition publishes its STATE_TRANSITION
// event; OPEN is entered with TransitionToOpenState, so its wait is the configured one (use
// cb.TransitionToOpenStateFor for another). ForceState fails for a nil cb, for a state that
// is not one of circuitbreaker's, and when cb is not in s afterwards (a subscriber moved it).
func ForceState(t testing.TB, cb *circuitbreaker.CircuitBreaker, s circuitbreaker.State) {
	t.Helper()
	if cb == nil {
		t.Fatalf("leveetest: ForceState(%v): nil *circuitbreaker.CircuitBreaker", s)
		return
	}
	if err := forceState(cb, s); err != nil {
		t.Fatalf("leveetest: ForceState(%v) of breaker %q: %v", s, cb.Name(), err)
		return
	}
	if got := cb.State(); got != s {
		t.Fatalf("leveetest: ForceState(%v) of breaker %q: the breaker is %v", s, cb.Name(), got)
	}
}

type unknownStateError struct{ s circuitbreaker.State }

func (e unknownStateError) Error() string {
	return "unknown state " + e.s.String()
}

func forceState(cb *circuitbreaker.CircuitBreaker, s circuitbreaker.State) error {
	switch s {
	case circuitbreaker.Closed:
		return cb.TransitionToClosedState()
	case circuitbreaker.Disabled:
		return cb.TransitionToDisabledState()
	case circuitbreaker.ForcedOpen:
		return cb.TransitionToForcedOpenState()
	case circuitbreaker.MetricsOnly:
		return cb.TransitionToMetricsOnlyState()
	case circuitbreaker.Open:
		if cb.State() == circuitbreaker.MetricsOnly {
			if err := cb.TransitionToClosedState(); err != nil {
				return err
			}
		}
		return cb.TransitionToOpenState()
	case circuitbreaker.HalfOpen:
		switch cb.State() {
		case circuitbreaker.MetricsOnly:
			if err := cb.TransitionToClosedState(); err != nil {
				return err
			}
			fallthrough
		case circuitbreaker.Closed:
			if err := cb.TransitionToOpenState(); err != nil {
				return err
			}
		}
		return cb.TransitionToHalfOpenState()
	default:
		return unknownStateError{s}
	}
}
