package leveestatus

import (
	"net/http"

	"github.com/levee-go/levee/circuitbreaker"
)

// The health statuses, as Spring Boot's and Resilience4j's CircuitBreakersHealthIndicator's.
const (
	StatusUp              = "UP"
	StatusDown            = "DOWN"
	StatusUnknown         = "UNKNOWN"
	StatusCircuitOpen     = "CIRCUIT_OPEN"
	StatusCircuitHalfOpen = "CIRCUIT_HALF_OPEN"
)

// health is the body of GET /health.
type health struct {
	Status     string                     `json:"status"`
	Components map[string]healthComponent `json:"components"`
}

type healthComponent struct {
	Status  string                `json:"status"`
	Details circuitBreakerDetails `json:"details"`
}

// breakerStatus maps a breaker's state to its health status, as Resilience4j's
// CircuitBreakersHealthIndicator: CLOSED is UP, OPEN CIRCUIT_OPEN (DOWN when the breaker may
// fail the health check), HALF_OPEN CIRCUIT_HALF_OPEN, every other state UNKNOWN.
func breakerStatus(s circuitbreaker.State, allowFail bool) string {
	switch s {
	case circuitbreaker.Closed:
		return StatusUp
	case circuitbreaker.Open:
		if allowFail {
			return StatusDown
		}
		return StatusCircuitOpen
	case circuitbreaker.HalfOpen:
		return StatusCircuitHalfOpen
	}
	return StatusUnknown
}

// serveHealth answers GET /health: UP and 200 unless a breaker's component is DOWN, then DOWN
// and 503, as Spring Boot maps statuses to HTTP. The components are every breaker, or with
// RegisterHealthIndicators only those registered.
func (h *Handler) serveHealth(w http.ResponseWriter, _ *http.Request) {
	out := health{Status: StatusUp, Components: map[string]healthComponent{}}
	for _, cb := range h.reg.CircuitBreakers() {
		if h.opts.healthOnly != nil && !h.opts.healthOnly[cb.Name()] {
			continue
		}
		d := circuitBreakerView(cb)
		st := breakerStatus(stateOf(d.State), h.opts.allowFail[cb.Name()])
		out.Components[cb.Name()] = healthComponent{Status: st, Details: d}
		if st == StatusDown {
			out.Status = StatusDown
		}
	}
	code := http.StatusOK
	if out.Status == StatusDown {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, out)
}

// stateOf parses a state's name, so that status and details come from one read.
func stateOf(name string) circuitbreaker.State {
	for s := circuitbreaker.Closed; s <= circuitbreaker.MetricsOnly; s++ {
		if s.String() == name {
			return s
		}
	}
	return -1
}
