package circuitbreaker

import "time"

// Permit is one permission granted by Acquire: a small value (pass and copy it freely; it
// allocates nothing) that carries the breaker, the period that granted it and the monotonic
// instant it was granted (read then, or, with a SlowCallDurationThreshold of 1 s or more, a
// reading the breaker took at most about 1 ms before: see the package comment's "Timing"). Report the call on it exactly once, as Resilience4j's onSuccess,
// onError, onResult or releasePermission: the elapsed time is measured from the grant, so no
// caller times its call. A caller that already timed it reports its own duration instead with
// OnSuccessWithDuration, OnErrorWithDuration or OnResultWithDuration.
//
// A period is one stay in one state: every transition (even into the same state, as
// TransitionToClosedState from CLOSED) and Reset start a new one, so a breaker that went
// CLOSED → OPEN → HALF_OPEN → CLOSED is in its fourth period. A Permit reports to the period
// that granted it:
//
//   - An outcome (success, failure, slow call, ignored error, result recorded as failure)
//     reported while that period is current is recorded in its window, may make its
//     transition and is shown to TransitionOnResult.
//   - An outcome reported after the breaker has left that period is late: its event is still
//     published (SUCCESS, ERROR or IGNORED_ERROR, as it would have been, with Event.Late
//     set), but it is recorded in no window, counts in no Metrics figure, is not shown to
//     TransitionOnResult and moves nothing. So a call admitted in CLOSED that ends while the
//     breaker is HALF_OPEN cannot decide the probes' trial, and one that ends while it is
//     OPEN leaves the metrics of the window that opened it as they were. A subscriber that
//     counts calls from events sees it; it can leave it out by its Late flag.
//   - A release (Release, or OnError with an ignored error) goes back to the granting period
//     too: a HALF_OPEN probe's permit returns to its own period's budget, never to a later
//     one.
//
// The period is compared once, when the outcome is reported: an outcome reported while the
// period is still current counts in it even if another goroutine leaves the period an instant
// later (it may then show in the window an OPEN period inherited, but no transition is made
// from a period that has been left).
//
// Completing a Permit twice (or releasing it after reporting an outcome) is a mistake that is
// made harmless where it matters: a HALF_OPEN probe is tracked by its period, so a second
// completion of it records nothing and gives back nothing, and that period never admits more
// than PermittedNumberOfCallsInHalfOpenState calls at a time. A Permit granted in another
// state records a second outcome again while its period is current (there is no budget to
// protect there; the window just counts one call twice). The zero Permit, which a refused
// Acquire returns, does nothing.
type Permit struct {
	cb    *CircuitBreaker
	st    *circuitState // the period that granted the permission
	start time.Duration // the grant, as time since the breaker's epoch
	slot  uint32        // HALF_OPEN: the probe's slot in st
	word  uint64        // HALF_OPEN: the slot word that proves the probe is still held
}

// OnSuccess reports a successful call, as Resilience4j's onSuccess: it publishes SUCCESS and,
// if the period that granted the permit is still current, records a success (slow if it took
// longer than SlowCallDurationThreshold since the grant) in that period's window, which may
// close a HALF_OPEN breaker or open a CLOSED one on its slow-call rate. A late success is
// published with Event.Late set and recorded nowhere (see Permit). TransitionOnResult is not
// consulted: there is no result to show it.
func (p Permit) OnSuccess() {
	if p.cb != nil && p.finish() {
		end := p.cb.end(p.st)
		p.cb.succeeded(p.st, end-p.start, end)
	}
}

// OnError reports a call that failed with err, as Resilience4j's onError, classified in this
// order:
//
//  1. err is a levee rejection (levee.IsRejection: an inner bulkhead, rate limiter or
//     breaker refused the call): a failure if RecordRejections matches it, else ignored
//     as in 2. No other list or predicate sees it.
//  2. IgnoreErrors or IgnoreErrorPredicate matches: the permission goes back to the period
//     that granted it (a HALF_OPEN probe permit comes back), IGNORED_ERROR is published,
//     nothing is recorded.
//  3. err is a *levee.PanicError: a failure, whatever RecordErrors says.
//  4. Neither RecordErrors nor RecordErrorPredicate is set, or one of them matches: a
//     failure (ERROR, then the failure is recorded). Otherwise a success (SUCCESS).
//
// A nil err is recorded as a failure without consulting the lists. A failure or success is
// recorded in the window of the period that granted the permit only while that period is
// current; late, its event is published with Event.Late set and nothing is recorded (see
// Permit).
// After an outcome recorded in the current period, TransitionOnResult is consulted with
// (nil, err). OnError cannot tell the caller's own cancellation: Release such calls instead.
func (p Permit) OnError(err error) {
	if p.cb != nil {
		end := p.cb.end(p.st)
		p.cb.failed(p, end-p.start, end, nil, err)
	}
}

// OnResult reports a call that returned result and err, as Resilience4j's onResult with Go's
// error argument: a non-nil err is handled as OnError; otherwise, when RecordResultPredicate
// is set and reports true for a non-nil result, the call is a failure whose ERROR event
// carries a *ResultRecordedAsFailureError, and else a success. Either is recorded only while
// the period that granted the permit is current, as for OnSuccess. TransitionOnResult is then
// consulted with (result, err), unless the outcome was late.
func (p Permit) OnResult(result any, err error) {
	if p.cb == nil {
		return
	}
	end := p.cb.end(p.st)
	p.onResult(end-p.start, end, result, err)
}

// onResult reports a call that took d, ended at end (time since the epoch) and returned
// result and err.
func (p Permit) onResult(d, end time.Duration, result any, err error) {
	if err != nil {
		p.cb.failed(p, d, end, result, err)
		return
	}
	if p.finish() {
		p.cb.transitionOnResult(p, p.cb.returned(p.st, d, end, result), result, nil)
	}
}

// OnSuccessWithDuration is OnSuccess for a call the caller timed itself, as Resilience4j's
// onSuccess(duration, durationUnit): d, not the time since the grant, is the call's duration
// that decides whether it was slow (longer than SlowCallDurationThreshold), that the window's
// durations add up and that the SUCCESS event carries. Everything else is as OnSuccess: the
// outcome goes to the period that granted the permit, a late one is published and recorded
// nowhere, and a time-based window files it under the second in which it is reported. Use it
// when an integration already measures its calls (a client's own latency histogram, say);
// OnSuccess, which measures from the grant on the monotonic clock, stays the default.
//
// A negative d (a duration computed from wall-clock instants across a clock step, for
// instance) is recorded as 0: the call happened and took no measurable time. Reporting on a
// permit that was already completed is the mistake described on Permit, handled the same way
// (a HALF_OPEN probe records nothing the second time). It allocates nothing and reads the
// monotonic clock once, for the second a time-based window files the outcome under.
func (p Permit) OnSuccessWithDuration(d time.Duration) {
	if p.cb != nil && p.finish() {
		p.cb.succeeded(p.st, max(d, 0), p.cb.end(p.st))
	}
}

// OnErrorWithDuration is OnError for a call the caller timed itself, as Resilience4j's
// onError(duration, durationUnit, throwable): err is classified exactly as by OnError, and d
// is the duration that decides whether a recorded call was slow, that the window adds up and
// that the ERROR, SUCCESS or IGNORED_ERROR event carries. A negative d is recorded as 0, and a
// permit already completed is handled as on Permit, as for OnSuccessWithDuration.
func (p Permit) OnErrorWithDuration(d time.Duration, err error) {
	if p.cb != nil {
		p.cb.failed(p, max(d, 0), p.cb.end(p.st), nil, err)
	}
}

// OnResultWithDuration is OnResult for a call the caller timed itself, as Resilience4j's
// onResult(duration, durationUnit, result) with Go's error argument: result and err are
// handled exactly as by OnResult (RecordResultPredicate, then TransitionOnResult), and d is
// the call's duration for the slow-call judgement, the window's durations and the event. A
// negative d is recorded as 0, and a permit already completed is handled as on Permit, as for
// OnSuccessWithDuration.
func (p Permit) OnResultWithDuration(d time.Duration, result any, err error) {
	if p.cb != nil {
		p.onResult(max(d, 0), p.cb.end(p.st), result, err)
	}
}

// Release hands the permission back without recording anything, as Resilience4j's
// releasePermission, to the period that granted it: a HALF_OPEN probe permit comes back to
// its own HALF_OPEN period, and only once, even if the breaker has moved on since (a later
// period's budget is never enlarged); in every other state it does nothing. Use it for a
// permitted call that told nothing about the dependency, e.g. cancelled by its caller.
func (p Permit) Release() {
	if p.st != nil {
		p.release()
	}
}

// finish marks the permit completed by an outcome and reports whether it had not been
// completed before (always true outside HALF_OPEN, where nothing is tracked).
func (p Permit) finish() bool {
	return p.st.kind != HalfOpen || p.st.finishProbe(p.slot, p.word)
}

// release gives the permit back to its period and reports whether it was still held.
func (p Permit) release() bool {
	return p.st.kind != HalfOpen || p.st.releaseProbe(p.slot, p.word)
}
