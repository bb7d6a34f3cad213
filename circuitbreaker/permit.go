package circuitbreaker

import "time"

// Permit is one permission granted by Acquire: a small value (pass and copy it freely; it
// allocates nothing) that carries the breaker, the period that granted it and the monotonic
// instant it was granted. Report the call on it exactly once, as Resilience4j's onSuccess,
// onError, onResult or releasePermission: the elapsed time is measured from the grant, so no
// caller times its call.
//
// Completing a Permit twice (or releasing it after reporting an outcome) is a mistake that is
// made harmless where it matters: a HALF_OPEN probe is tracked by its period, so a second
// completion of it records nothing and gives back nothing, and that period never admits more
// than PermittedNumberOfCallsInHalfOpenState calls at a time. A Permit granted in another
// state records a second outcome again (there is no budget to protect there; the window just
// counts one call twice). The zero Permit, which a refused Acquire returns, does nothing.
type Permit struct {
	cb    *CircuitBreaker
	st    *circuitState // the period that granted the permission
	start time.Duration // the grant, as time since the breaker's epoch
	slot  uint32        // HALF_OPEN: the probe's slot in st
	word  uint64        // HALF_OPEN: the slot word that proves the probe is still held
}

// OnSuccess reports a successful call, as Resilience4j's onSuccess: it publishes SUCCESS and
// records a success (slow if it took longer than SlowCallDurationThreshold since the grant)
// in the current state, which may close a HALF_OPEN breaker or open a CLOSED one on its
// slow-call rate. TransitionOnResult is not consulted: there is no result to show it.
func (p Permit) OnSuccess() {
	if p.cb != nil && p.finish() {
		end := p.cb.now()
		p.cb.succeeded(end-p.start, end)
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
// A nil err is recorded as a failure without consulting the lists. After a recorded outcome,
// TransitionOnResult is consulted with (nil, err). OnError cannot tell the caller's own
// cancellation: Release such calls instead.
func (p Permit) OnError(err error) {
	if p.cb != nil {
		end := p.cb.now()
		p.cb.failed(p, end-p.start, end, nil, err)
	}
}

// OnResult reports a call that returned result and err, as Resilience4j's onResult with Go's
// error argument: a non-nil err is handled as OnError; otherwise, when RecordResultPredicate
// is set and reports true for a non-nil result, the call is a failure whose ERROR event
// carries a *ResultRecordedAsFailureError, and else a success. TransitionOnResult is then
// consulted with (result, err).
func (p Permit) OnResult(result any, err error) {
	if p.cb == nil {
		return
	}
	end := p.cb.now()
	d := end - p.start
	if err != nil {
		p.cb.failed(p, d, end, result, err)
		return
	}
	if p.finish() {
		p.cb.returned(d, end, result)
		p.cb.transitionOnResult(result, nil)
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
