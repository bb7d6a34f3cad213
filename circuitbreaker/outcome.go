package circuitbreaker

import (
	"errors"
	"time"

	"github.com/levee-go/levee/internal/reject"
	"github.com/levee-go/levee/internal/safe"
)

// current reports whether period st, which granted a permit, is the breaker's current one:
// only then does the permit's outcome count. One pointer comparison, made once per outcome,
// when it is reported.
func (cb *CircuitBreaker) current(st *circuitState) bool { return cb.state.Load() == st }

// succeeded publishes SUCCESS for a call permitted by period st, which took d and ended at end
// (time since the epoch), and records it if st is current; it reports whether it was.
func (cb *CircuitBreaker) succeeded(st *circuitState, d, end time.Duration) bool {
	now := cb.state.Load()
	cur := now == st
	kind := noStat
	if now.kind.allowPublish() {
		kind = statSuccessful
		if cb.events.Wants(callEvents) {
			cb.countCall(kind, d, end)
			kind = noStat
			cb.publish(Event{Type: EventSuccess, Duration: d, Late: !cur})
		}
	}
	cb.account(st, cur, kind, d, end, false)
	return cur
}

// noStat is the kind of a call that CallStats does not count.
const noStat = -1

// countCall adds a call of kind to CallStats alone.
func (cb *CircuitBreaker) countCall(kind int, d, end time.Duration) {
	cb.rec.Lock()
	cb.stats.record(kind, d, end)
	cb.rec.Unlock()
}

// returned handles a call permitted by period st that returned result and no error, and
// reports whether st was current.
func (cb *CircuitBreaker) returned(st *circuitState, d, end time.Duration, result any) bool {
	// A predicate that panics records the call as a failure rather than crashing the caller.
	if pr := st.set.cfg.RecordResultPredicate; pr != nil && result != nil && safe.Predicate(pr, result, true) {
		now := cb.state.Load()
		cur := now == st
		kind := noStat
		if now.kind.allowPublish() {
			kind = statFailed
			if cb.events.Wants(callEvents) {
				cb.countCall(kind, d, end)
				kind = noStat
				cb.publish(Event{Type: EventError, Duration: d, Late: !cur,
					Err: &ResultRecordedAsFailureError{Name: cb.name, Result: result}})
			}
		}
		cb.account(st, cur, kind, d, end, true)
		return cur
	}
	return cb.succeeded(st, d, end)
}

// failed handles an error outcome of permit p that took d and ended at end (time since the
// epoch); result goes to TransitionOnResult along with err.
func (cb *CircuitBreaker) failed(p Permit, d, end time.Duration, result any, err error) {
	var cur bool
	switch p.st.set.classify(err) {
	case ignored:
		if p.release() {
			if now := cb.state.Load(); now.kind.allowPublish() {
				cb.countCall(statIgnored, d, end)
				if cb.events.Wants(callEvents) {
					cb.publish(Event{Type: EventIgnoredError, Duration: d, Err: err, Late: now != p.st})
				}
			}
		}
		return
	case failure:
		if !p.finish() {
			return
		}
		now := cb.state.Load()
		cur = now == p.st
		kind := noStat
		if now.kind.allowPublish() {
			kind = statFailed
			if cb.events.Wants(callEvents) {
				cb.countCall(kind, d, end)
				kind = noStat
				cb.publish(Event{Type: EventError, Duration: d, Err: err, Late: !cur})
			}
		}
		cb.account(p.st, cur, kind, d, end, true)
	default:
		if !p.finish() {
			return
		}
		cur = cb.succeeded(p.st, d, end)
	}
	cb.transitionOnResult(p, cur, result, err)
}

type classification uint8

const (
	success classification = iota
	failure
	ignored
)

func (s *settings) classify(err error) (c classification) {
	if err == nil {
		return failure
	}
	// Matching runs the Is and As methods of err's chain, user code: one that panics records
	// the call as a failure rather than crash the caller holding a HALF_OPEN permit.
	defer func() {
		if recover() != nil {
			c = failure
		}
	}()
	// A rejection says nothing about the dependency, which was never called: only the list
	// named for rejections may count it.
	if reject.Is(err) {
		if s.rejectionList.Match(err) {
			return failure
		}
		return ignored
	}
	// User predicates that panic err on the side of recording the failure: a broken ignore
	// predicate ignores nothing, a broken record predicate records.
	if s.ignoreList.Match(err) || s.cfg.IgnoreErrorPredicate != nil && safe.Predicate(s.cfg.IgnoreErrorPredicate, err, false) {
		return ignored
	}
	if s.recordAll || isPanic(err) || s.recordList.Match(err) ||
		s.cfg.RecordErrorPredicate != nil && safe.Predicate(s.cfg.RecordErrorPredicate, err, true) {
		return failure
	}
	return success
}

func isPanic(err error) bool {
	var pe *safe.PanicError
	return errors.As(err, &pe)
}

// account counts a call of kind (noStat: none) in CallStats and, if its period st is current
// (cur: it was when the outcome was reported), records it in st's window, in one critical
// section, then makes the transition the window calls for, from st only: if st has been left
// meanwhile, the compare-and-swap fails and nothing moves. OPEN and FORCED_OPEN never record
// (they grant no permit); DISABLED records nothing.
func (cb *CircuitBreaker) account(st *circuitState, cur bool, kind int, d, end time.Duration, failed bool) {
	cur = cur && st.kind != Disabled
	if !cur {
		if kind != noStat {
			cb.countCall(kind, d, end)
		}
		return
	}
	o := outcomeCall
	if failed {
		o |= outcomeFailed
	}
	if d > st.set.cfg.SlowCallDurationThreshold {
		o |= outcomeSlow
	}
	cb.rec.Lock()
	if kind != noStat {
		cb.stats.record(kind, d, end)
	}
	t := st.metrics.win.recordLocked(o, d, end)
	cb.rec.Unlock()
	if t.failed == 0 && t.slow == 0 && st.kind == Closed {
		return // both rates are 0, below every threshold (both are more than 0)
	}
	cb.decide(st, t)
}

// decide makes the transition that the totals t of period st's window call for.
func (cb *CircuitBreaker) decide(st *circuitState, t tally) {
	fr, sr := st.metrics.rates(t)
	v := st.set.evaluate(fr, sr)
	switch st.kind {
	case Closed:
		if v&exceeded != 0 {
			cb.swapExceeded(st, cb.newOpenAfter(st), v, fr, sr)
		}
	case HalfOpen:
		// Resilience4j publishes no *_RATE_EXCEEDED events for half-open decisions.
		switch {
		case v&exceeded != 0:
			cb.swap(st, cb.newOpenAfter(st))
		case v == belowThresholds:
			cb.swap(st, cb.newClosed())
		}
	case MetricsOnly:
		if v&failureRateExceeded == 0 || !st.failureRateExceeded.CompareAndSwap(false, true) {
			v &^= failureRateExceeded
		}
		if v&slowCallRateExceeded == 0 || !st.slowCallRateExceeded.CompareAndSwap(false, true) {
			v &^= slowCallRateExceeded
		}
		cb.publishExceeded(v, fr, sr)
	}
}

// verdict is Resilience4j's CircuitBreakerMetrics.Result as bits: zero is "below the
// minimum number of calls".
type verdict uint8

const (
	belowThresholds verdict = 1 << iota
	failureRateExceeded
	slowCallRateExceeded

	exceeded = failureRateExceeded | slowCallRateExceeded
)

func (s *settings) evaluate(fr, sr float32) verdict {
	if fr < 0 { // -1: below the minimum number of calls
		return 0
	}
	var v verdict
	if fr >= s.cfg.FailureRateThreshold {
		v |= failureRateExceeded
	}
	if sr >= s.cfg.SlowCallRateThreshold {
		v |= slowCallRateExceeded
	}
	if v == 0 {
		v = belowThresholds
	}
	return v
}

// rates returns the failure and slow-call rates of c in percent, computed in float32 as
// Resilience4j's failed*100f/calls, or -1 for both while c holds fewer calls than the
// minimum.
func (m *stateMetrics) rates(c tally) (failureRate, slowCallRate float32) {
	if c.calls == 0 || c.calls < m.minCalls {
		return -1, -1
	}
	return percent(c.failed, c.calls), percent(c.slow, c.calls)
}

func percent(part, whole int) float32 {
	if part == 0 { // the common case, without a division
		return 0
	}
	// The explicit conversions round after each operation, as Java's float arithmetic.
	return float32(float32(part)*100) / float32(whole)
}
