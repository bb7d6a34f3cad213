package circuitbreaker

import (
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/levee-go/levee/internal/errmatch"
	"github.com/levee-go/levee/internal/event"
	"github.com/levee-go/levee/internal/logging"
)

// CircuitBreaker is a named, concurrency-safe breaker shared by every call to one dependency,
// whatever their result types, as Resilience4j's CircuitBreakerStateMachine.
//
// The current state is an object behind an atomic pointer, replaced by compare-and-swap on
// every transition (a new object each time, even into the same state), and each object owns
// its window. So asking for permission takes no mutex, an outcome decides at most one
// transition, and a permit reports to the period that granted it. Recording an outcome
// holds one mutex of the breaker only while the window's ring and totals and the CallStats
// figures change, so every decision is made on an exact window.
//
// Every instant the breaker keeps (the end of OPEN, a permit's start, a time-based window's
// seconds) is a duration since the breaker's epoch, the instant New ran, read from the
// monotonic clock; the wall clock only stamps events. Create one with New; the zero value is
// not usable.
//
// Build one with New. The zero value, like nil, is not usable: every method and function
// answers it exactly as it answers a nil pointer (ErrNilCircuitBreaker, a zero answer or a no-op),
// never with a panic.
type CircuitBreaker struct {
	name  string
	epoch time.Time // with a monotonic reading: now() never reads the wall clock

	// settings is the config the next period is built with (New's, or the last
	// ChangeConfig's). Each period keeps the settings it was built with for its whole life.
	settings atomic.Pointer[settings]

	// refusals holds the error returned for a refusal in each state, built once by New so
	// that refusing allocates nothing.
	refusals [MetricsOnly + 1]CallNotPermittedError

	state  atomic.Pointer[circuitState]
	events event.Publisher[Event]
	gate   transitionGate // publishes the transitions' events in their order

	mu     sync.Mutex   // serialises ChangeConfig; guards logger and unlog
	logger *slog.Logger // Config.Logger in force
	unlog  func()       // removes the logger's event consumer

	calls callClock // the shared start reading of calls, see clock.go

	// rec guards every window of the breaker's periods and the CallStats figures: a call
	// records its outcome in both in one short critical section (never across the user's
	// call). It has a cache line of its own, shared only with the figures it guards.
	_     [cacheLine]byte
	rec   sync.Mutex
	stats callStats // the cumulative per-call figures, see CallStats
}

// settings is a Config compiled by New or ChangeConfig; it is never modified once stored.
type settings struct {
	cfg           Config // defaults filled in, lists copied
	recordList    errmatch.List
	ignoreList    errmatch.List
	rejectionList errmatch.List
	recordAll     bool // neither RecordErrors nor RecordErrorPredicate: every error is a failure
	// plain: neither RecordResultPredicate nor TransitionOnResult, so a call that returned no
	// error is a success and its result is looked at by nobody.
	plain bool
}

// compile validates cfg and fills in its defaults, for New and ChangeConfig.
func compile(cfg Config) (*settings, error) {
	c, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	s := &settings{cfg: c}
	if s.recordList, err = compileList("RecordErrors", c.RecordErrors, false); err != nil {
		return nil, err
	}
	if s.ignoreList, err = compileList("IgnoreErrors", c.IgnoreErrors, false); err != nil {
		return nil, err
	}
	if s.rejectionList, err = compileList("RecordRejections", c.RecordRejections, true); err != nil {
		return nil, err
	}
	s.recordAll = s.recordList.Empty() && c.RecordErrorPredicate == nil
	s.plain = c.RecordResultPredicate == nil && c.TransitionOnResult == nil
	return s, nil
}

// New returns a breaker named name (used in errors and events) configured by cfg, whose zero
// fields take the defaults DefaultConfig returns. It refuses, with an error naming the field and its
// allowed range (see Config), every out-of-range value, a nil entry in an error list, an entry
// of RecordRejections that is no levee rejection, and setting both WaitDurationInOpenState and
// WaitIntervalFunctionInOpenState.
func New(name string, cfg Config) (*CircuitBreaker, error) {
	set, err := compile(cfg)
	if err != nil {
		return nil, err
	}
	c := set.cfg
	cb := &CircuitBreaker{name: name, epoch: time.Now()}
	cb.calls.init(cb.epoch)
	cb.settings.Store(set)
	for s := range cb.refusals {
		cb.refusals[s] = CallNotPermittedError{Name: name, State: State(s)}
	}

	var st *circuitState
	switch c.InitialState {
	case Closed:
		st = cb.newClosed()
	case Open:
		st = cb.newOpen(1, cb.closedMetrics(&c), cb.after(c.waitInOpenState(1)))
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
	cb.gate.next = st.seq + 1
	cb.setLoggerLocked(c.Logger) // cb is not shared yet
	cb.arm(st)
	return cb, nil
}

// ChangeConfig replaces cb's configuration, levee's addition for reloading a configuration at
// run time (Resilience4j's CircuitBreaker has no changeConfig). cfg is validated exactly as by
// New, with the same errors, and an invalid cfg changes nothing. To change one field, start
// from cb.Config():
//
//	cfg := cb.Config()
//	cfg.FailureRateThreshold = 80
//	err := cb.ChangeConfig(cfg)
//
// The new config takes effect from the breaker's next period, that is from its next state
// transition (or Reset): each period (one stay in one state, see Permit) is built with the
// config in force when it starts and keeps it to its end. So the current period goes on
// unchanged — a CLOSED period keeps its sliding window (type, size, minimum number of calls),
// its thresholds (FailureRateThreshold, SlowCallRateThreshold, SlowCallDurationThreshold),
// its error lists and predicates, RecordResultPredicate and TransitionOnResult; a HALF_OPEN
// period keeps its probe budget (PermittedNumberOfCallsInHalfOpenState, no permit is lost or
// added), its MaxWaitDurationInHalfOpenState and TransitionToStateAfterWaitDuration; an OPEN
// period keeps its wait and AutomaticTransitionFromOpenToHalfOpenEnabled. A permit's outcome
// is judged by the config of the period that granted it. The period that follows — the OPEN
// period (its WaitDurationInOpenState or WaitIntervalFunctionInOpenState), the HALF_OPEN
// period, the next CLOSED or METRICS_ONLY period with a fresh window of the new
// SlidingWindowType and SlidingWindowSize — is built with the new config. To apply it at once,
// follow ChangeConfig with a transition (TransitionToClosedState, for instance), which starts
// a fresh window. An OPEN period's window is the one of the period it came from, kept with
// its contents, as Resilience4j keeps it: it is read, never recorded in.
//
// InitialState is validated but has no effect after New. The opening attempt number and the
// counters go on. Logger is replaced at once, as Bulkhead.ChangeConfig replaces it: the same
// logger keeps its one consumer, another one takes its place, and nil stops the logging. A
// nil cb returns ErrNilCircuitBreaker.
func (cb *CircuitBreaker) ChangeConfig(cfg Config) error {
	if cb.unset() {
		return ErrNilCircuitBreaker
	}
	set, err := compile(cfg)
	if err != nil {
		return err
	}
	cb.mu.Lock()
	defer cb.mu.Unlock()
	cb.settings.Store(set)
	cb.setLoggerLocked(set.cfg.Logger)
	return nil
}

// setLoggerLocked subscribes the consumer of logger (none for nil) in place of the current one,
// unless logger is already the one in use.
func (cb *CircuitBreaker) setLoggerLocked(logger *slog.Logger) {
	if cb.unlog != nil && logger == cb.logger {
		return
	}
	if cb.unlog != nil {
		cb.unlog()
	}
	cb.logger = logger
	cb.unlog = logging.SubscribeKinds(&cb.events, loggedEvents, logger, logging.CircuitBreaker, cb.name, cb.logRecord)
}

// now is the time elapsed since the breaker's epoch. time.Since of an instant that carries a
// monotonic reading reads the monotonic clock alone; in a testing/synctest bubble it follows
// the bubble's fake clock.
func (cb *CircuitBreaker) now() time.Duration { return time.Since(cb.epoch) }

// after is the instant d from now, as a duration since the epoch; it saturates rather than
// overflow for a huge d. Every d < 0 gives the same instant, 1ns ago (the wait is over either
// way): a deadline far in the past would make the later deadline-now subtractions overflow,
// as time.Until(time.Time{}) = math.MinInt64 read a moment later does.
func (cb *CircuitBreaker) after(d time.Duration) time.Duration {
	now := cb.now()
	switch {
	case now > 0 && d > math.MaxInt64-now: // for now <= 0, now + d cannot overflow
		return math.MaxInt64
	case d < 0:
		return now - 1
	}
	return now + d
}

// Name returns the name given to New, or "" for a nil cb.
func (cb *CircuitBreaker) Name() string {
	if cb.unset() {
		return ""
	}
	return cb.name
}

// State returns the current state. Reading it never moves the breaker: an OPEN breaker whose
// wait has ended stays OPEN until a permission request (or the automatic timer) moves it, as
// Resilience4j's getState. A nil cb reports the zero State.
func (cb *CircuitBreaker) State() State {
	if cb.unset() {
		return 0
	}
	return cb.state.Load().kind
}

// Config returns the configuration in force (New's, or the last ChangeConfig's), with
// defaults filled in: the one the next period is built with, which the current period uses
// too unless it started before the last ChangeConfig (see ChangeConfig). The slices are
// copies. The zero Config for a nil cb.
func (cb *CircuitBreaker) Config() Config {
	if cb.unset() {
		return Config{}
	}
	c := cb.settings.Load().cfg
	c.RecordErrors = append([]error(nil), c.RecordErrors...)
	c.IgnoreErrors = append([]error(nil), c.IgnoreErrors...)
	c.RecordRejections = append([]error(nil), c.RecordRejections...)
	return c
}

// Acquire asks to run one call, as Resilience4j's tryAcquirePermission. When the call may run
// it returns a Permit, on which the caller must report the call with exactly one of
// Permit.OnSuccess, OnError, OnResult or Release. Otherwise it returns the zero Permit and a
// *CallNotPermittedError:
//
//   - CLOSED, DISABLED, METRICS_ONLY always permit;
//   - OPEN refuses until the monotonic clock is strictly after the end of its wait, then moves
//     to HALF_OPEN and asks it;
//   - HALF_OPEN permits while probe permits remain, taking one each time;
//   - FORCED_OPEN always refuses.
//
// A refusal increments NumberOfNotPermittedCalls and publishes NOT_PERMITTED (not in
// FORCED_OPEN). It allocates nothing: the error is one the breaker built at New for that
// state, and must not be modified. It reads no clock either, except in the last second of an
// OPEN wait: a timer marks that second, and the clock decides only within it. Acquire returns
// ErrNilCircuitBreaker for a nil cb.
func (cb *CircuitBreaker) Acquire() (Permit, error) {
	if cb.unset() {
		return Permit{}, ErrNilCircuitBreaker
	}
	p, ok := cb.acquire()
	if !ok {
		return Permit{}, cb.notPermitted(p.st)
	}
	p.start = cb.begin(p.st)
	return p, nil
}

// acquire decides a permission. It returns a Permit without its start instant (Execute takes
// it just before the call), or, refused, one whose st is the state that refused. CLOSED, by
// far the most common state, is decided inline.
func (cb *CircuitBreaker) acquire() (Permit, bool) {
	if st := cb.state.Load(); st.kind == Closed {
		return Permit{cb: cb, st: st}, true
	}
	return cb.acquireSlow()
}

func (cb *CircuitBreaker) acquireSlow() (Permit, bool) {
	p := cb.acquireFrom(cb.state.Load())
	return p, p.cb != nil
}

// acquireFrom decides a permission, st being the state just loaded: it returns a Permit
// without its start instant, or, refused, one with a nil cb whose st is the state that
// refused.
func (cb *CircuitBreaker) acquireFrom(st *circuitState) Permit {
	for ; ; st = cb.state.Load() {
		switch st.kind {
		case Closed, Disabled, MetricsOnly:
			return Permit{cb: cb, st: st}
		case HalfOpen:
			if slot, word, ok := st.takeProbe(); ok {
				return Permit{cb: cb, st: st, slot: slot, word: word}
			}
		case Open:
			if !st.ending.Load() { // far from the end of the wait: no need to read the clock
				st.metrics.notPermitted.add()
				return Permit{st: st}
			}
			now := cb.now()
			if now > st.deadline {
				cb.openToHalfOpen(st)
				continue // ask whichever state is current now, as Resilience4j's OpenState
			}
			st.metrics.notPermitted.addAt(now)
			return Permit{st: st}
		}
		st.metrics.notPermitted.add()
		return Permit{st: st}
	}
}

func (cb *CircuitBreaker) notPermitted(st *circuitState) error {
	if cb.state.Load().kind.allowPublish() {
		cb.stats.notPermitted.add()
		if cb.events.Wants(1 << EventNotPermitted) {
			cb.publish(Event{Type: EventNotPermitted})
		}
	}
	return &cb.refusals[st.kind]
}

// RemainingWaitInOpenState returns how long an OPEN breaker keeps refusing from now: the time
// until the first instant at which Acquire permits (strictly after the end of the wait, see
// Acquire), so an Acquire made once it has elapsed is permitted unless the state changed
// meanwhile. It returns 0 in every other state (FORCED_OPEN included, which has no wait) and
// once the wait has ended, and for a nil cb. It never moves the breaker. Resilience4j has no
// counterpart; stream consumers use it to wait for the breaker instead of polling it.
func (cb *CircuitBreaker) RemainingWaitInOpenState() time.Duration {
	if cb.unset() {
		return 0
	}
	st := cb.state.Load()
	if st.kind != Open {
		return 0
	}
	if d := st.deadline - cb.now(); d >= 0 {
		return d + 1
	}
	return 0
}

// unset reports whether cb is nil or a zero CircuitBreaker that New never built: every exported
// method answers both as it answers nil.
func (cb *CircuitBreaker) unset() bool { return cb == nil || cb.state.Load() == nil }
