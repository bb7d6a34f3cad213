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
	if now.kind.allowPublish() {
		cb.stats.record(statSuccessful, d, end)
		if cb.events.Wants(callEvents) {
			cb.publish(Event{Type: EventSuccess, Duration: d, Late: !cur})
		}
	}
	if cur {
		cb.record(st, d, end, false)
	}
	return cur
}

// returned handles a call permitted by period st that returned result and no error, and
// reports whether st was current.
func (cb *CircuitBreaker) returned(st *circuitState, d, end time.Duration, result any) bool {
	// A predicate that panics records the call as a failure rather than crashing the caller.
	if pr := st.set.cfg.RecordResultPredicate; pr != nil && result != nil && safe.Predicate(pr, result, true) {
		now := cb.state.Load()
		cur := now == st
		if now.kind.allowPublish() {
			cb.stats.record(statFailed, d, end)
			if cb.events.Wants(callEvents) {
				cb.publish(Event{Type: EventError, Duration: d, Late: !cur,
					Err: &ResultRecordedAsFailureError{Name: cb.name, Result: result}})
			}
		}
		if cur {
			cb.record(st, d, end, true)
		}
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
				cb.stats.record(statIgnored, d, end)
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
		if now.kind.allowPublish() {
			cb.stats.record(statFailed, d, end)
			if cb.events.Wants(callEvents) {
				cb.publish(Event{Type: EventError, Duration: d, Err: err, Late: !cur})
			}
		}
		if cur {
			cb.record(p.st, d, end, true)
		}
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

// record adds an outcome of period st, which was current when the outcome was reported, to
// st's window and makes the transition it calls for, from st only: if st has been left
// meanwhile, the compare-and-swap fails and nothing moves. OPEN and FORCED_OPEN never get
// here (they grant no permit); DISABLED records nothing.
func (cb *CircuitBreaker) record(st *circuitState, d, end time.Duration, failed bool) {
	if st.kind == Disabled {
		return
	}
	o := outcomeCall
	if failed {
		o |= outcomeFailed
	}
	if d > st.set.cfg.SlowCallDurationThreshold {
		o |= outcomeSlow
	}
	c := st.metrics.win.recordAt(o, d, end)
	fr, sr := st.metrics.rates(c)
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
func (m *stateMetrics) rates(c counts) (failureRate, slowCallRate float32) {
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
