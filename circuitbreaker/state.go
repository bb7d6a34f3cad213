package circuitbreaker

import "strconv"

// State is a circuit breaker state, as Resilience4j's CircuitBreaker.State.
//
// CLOSED, OPEN and HALF_OPEN are the normal cycle. DISABLED (always permits, records nothing),
// FORCED_OPEN (never permits, records nothing) and METRICS_ONLY (always permits, records and
// publishes but never opens) are entered only by the TransitionToXxxState methods or
// Config.InitialState.
type State int32

// The states, in Resilience4j's order.
const (
	Closed State = iota
	Open
	HalfOpen
	Disabled
	ForcedOpen
	MetricsOnly
)

var stateNames = [...]string{"CLOSED", "OPEN", "HALF_OPEN", "DISABLED", "FORCED_OPEN", "METRICS_ONLY"}

// String returns the Resilience4j name of s ("CLOSED", "HALF_OPEN", ...), or "State(n)" for a
// value that is not a state.
func (s State) String() string {
	if s.valid() {
		return stateNames[s]
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

func (s State) valid() bool { return s >= Closed && s <= MetricsOnly }

// allowPublish reports whether per-call events (SUCCESS, ERROR, NOT_PERMITTED, ...) are
// published while the breaker is in s. STATE_TRANSITION and RESET are always published.
func (s State) allowPublish() bool { return s != Disabled && s != ForcedOpen }

// transitionAllowed is Resilience4j's StateTransition table: every state may move to itself
// (a silent reset), and every other move is legal except CLOSED→HALF_OPEN and
// METRICS_ONLY→OPEN/HALF_OPEN.
func transitionAllowed(from, to State) bool {
	switch {
	case from == to:
		return true
	case from == Closed && to == HalfOpen:
		return false
	case from == MetricsOnly && (to == Open || to == HalfOpen):
		return false
	}
	return true
}
