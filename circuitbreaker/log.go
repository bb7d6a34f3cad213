package circuitbreaker

import (
	"log/slog"

	"github.com/levee-go/levee/internal/logging"
)

// logRecord is how Config.Logger logs an event: transitions at Warn (into OPEN, FORCED_OPEN)
// or Info, resets and exceeded rates at Info, refusals at Debug with the error the caller
// received (its state is the breaker's when the record is made, which is the refusing state
// unless another goroutine moved the breaker in between); per-call outcomes not at all.
func (cb *CircuitBreaker) logRecord(e Event) (logging.Record, bool) {
	r := logging.Record{Event: e.Type.String()}
	switch e.Type {
	case EventStateTransition:
		r.Level, r.Msg, r.Attrs = logging.TransitionLevel(e.To.String()), "circuit breaker state transition", logging.WithTransition
		r.From, r.To = e.From.String(), e.To.String()
	case EventNotPermitted:
		r = logging.Refusal("circuit breaker call not permitted", r.Event, &cb.refusals[cb.state.Load().kind])
	case EventReset:
		r.Level, r.Msg = slog.LevelInfo, "circuit breaker reset"
	case EventFailureRateExceeded:
		r.Level, r.Msg, r.Attrs = slog.LevelInfo, "circuit breaker failure rate exceeded", logging.WithRates
		r.FailureRate, r.SlowCallRate = e.FailureRate, e.SlowCallRate
	case EventSlowCallRateExceeded:
		r.Level, r.Msg, r.Attrs = slog.LevelInfo, "circuit breaker slow call rate exceeded", logging.WithRates
		r.FailureRate, r.SlowCallRate = e.FailureRate, e.SlowCallRate
	default: // SUCCESS, ERROR, IGNORED_ERROR: one per call, the caller has the error
		return r, false
	}
	return r, true
}
