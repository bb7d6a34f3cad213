package circuitbreaker

import (
	"sync/atomic"
	"time"

	"github.com/levee-go/levee/internal/errmatch"
	"github.com/levee-go/levee/internal/event"
)

// CircuitBreaker is Resilience4j's CircuitBreakerStateMachine: a named, concurrency-safe
// breaker shared by every call to one dependency, whatever their result types.
//
// The current state is an immutable-identity object behind an atomic pointer, replaced by
// compare-and-swap on every transition (a new object each time, as Resilience4j's state
// classes), and each object owns its window. So asking for permission takes no mutex, an
// outcome decides at most one transition, and a permit is returned to the HALF_OPEN period
// that granted it. Recording an outcome holds the window's mutex only while its ring and
// totals change, so every decision is made on an exact window, as in Resilience4j. Create one with New; the zero value is not usable.
type CircuitBreaker struct {
	name       string
	cfg        Config
	recordList errmatch.List
	ignoreList errmatch.List
	recordAll  bool // neither RecordErrors nor RecordErrorPredicate: every error is a failure

	state  atomic.Pointer[circuitState]
	events event.Publisher[Event]
}

// New returns a breaker named name (used in errors and events) configured by cfg, whose zero
// fields take Resilience4j's defaults. It refuses, with an error naming the field and its
// allowed range, every out-of-range value, a nil entry in RecordErrors or IgnoreErrors, and
// setting both WaitDurationInOpenState and WaitIntervalFunctionInOpenState.
func New(name string, cfg Config) (*CircuitBreaker, error) {
	c, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	cb := &CircuitBreaker{name: name, cfg: c}
	if cb.recordList, err = errmatch.Compile("RecordErrors", c.RecordErrors); err != nil {
		return nil, prefixed(err)
	}
	if cb.ignoreList, err = errmatch.Compile("IgnoreErrors", c.IgnoreErrors); err != nil {
		return nil, prefixed(err)
	}
	cb.recordAll = cb.recordList.Empty() && c.RecordErrorPredicate == nil

	var st *circuitState
	switch c.InitialState {
	case Closed:
		st = cb.newClosed()
	case Open:
		st = cb.newOpen(1, cb.closedMetrics(), time.Now().Add(c.waitInOpenState(1)))
	case HalfOpen:
		st = cb.newHalfOpen(1)
	case Disabled:
		st = cb.newDisabled()
	case ForcedOpen:
		st = cb.newForcedOpen(1)
	case MetricsOnly:
		st = cb.newMetricsOnly()
	}
	cb.state.Store(st)
	cb.arm(st)
	return cb, nil
}

type prefixedError struct{ err error }

func (e prefixedError) Error() string { return "circuitbreaker: " + e.err.Error() }
func (e prefixedError) Unwrap() error { return e.err }

func prefixed(err error) error { return prefixedError{err} }

// Name returns the name given to New, or "" for a nil cb.
func (cb *CircuitBreaker) Name() string {
	if cb == nil {
		return ""
	}
	return cb.name
}

// State returns the current state. Reading it never moves the breaker: an OPEN breaker whose
// wait has ended stays OPEN until a permission request (or the automatic timer) moves it, as
// Resilience4j's getState. A nil cb reports the zero State.
func (cb *CircuitBreaker) State() State {
	if cb == nil {
		return 0
	}
	return cb.state.Load().kind
}

// Config returns the configuration in use, with defaults filled in; the zero Config for a nil
// cb.
func (cb *CircuitBreaker) Config() Config {
	if cb == nil {
		return Config{}
	}
	c := cb.cfg
	c.RecordErrors = append([]error(nil), c.RecordErrors...)
	c.IgnoreErrors = append([]error(nil), c.IgnoreErrors...)
	return c
}

// TryAcquirePermission asks to run one call, as Resilience4j's tryAcquirePermission. It
// returns nil when the call may run — the caller must then report it with exactly one of
// OnSuccess, OnError, OnResult or ReleasePermission — or a *CallNotPermittedError:
//
//   - CLOSED, DISABLED, METRICS_ONLY always permit;
//   - OPEN refuses until time.Now() is strictly after the end of its wait, then moves to
//     HALF_OPEN and asks it;
//   - HALF_OPEN permits while probe permits remain, taking one each time;
//   - FORCED_OPEN always refuses.
//
// A refusal increments NumberOfNotPermittedCalls and publishes NOT_PERMITTED (not in
// FORCED_OPEN). It returns ErrNilCircuitBreaker for a nil cb.
func (cb *CircuitBreaker) TryAcquirePermission() error {
	if cb == nil {
		return ErrNilCircuitBreaker
	}
	if st, ok := cb.acquire(); !ok {
		return cb.notPermitted(st)
	}
	return nil
}

// acquire decides a permission and returns the state object that decided, so that Execute can
// hand a HALF_OPEN permit back to the period that granted it.
func (cb *CircuitBreaker) acquire() (*circuitState, bool) {
	for {
		st := cb.state.Load()
		switch st.kind {
		case Closed, Disabled, MetricsOnly:
			return st, true
		case HalfOpen:
			if st.takePermit() {
				return st, true
			}
		case Open:
			if time.Now().After(st.deadline) {
				cb.openToHalfOpen(st)
				continue // ask whichever state is current now, as Resilience4j's OpenState
			}
		}
		st.metrics.notPermitted.Add(1)
		return st, false
	}
}

func (cb *CircuitBreaker) notPermitted(st *circuitState) error {
	if cb.events.Active() {
		cb.publish(Event{Type: EventNotPermitted})
	}
	return &CallNotPermittedError{Name: cb.name, State: st.kind}
}

// ReleasePermission hands back a permission without recording an outcome, as Resilience4j's
// releasePermission: in HALF_OPEN the current period gets one probe permit back (without an
// upper bound, so call it only for a permission you hold); elsewhere it does nothing. Use it
// when a permitted call is abandoned, e.g. cancelled by its caller before it told anything
// about the dependency. On a nil cb it does nothing.
func (cb *CircuitBreaker) ReleasePermission() {
	if cb != nil {
		cb.state.Load().release()
	}
}
