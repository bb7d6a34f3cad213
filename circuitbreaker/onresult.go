package circuitbreaker

import "time"

// Transition is what Config.TransitionOnResult asks of the breaker after a call, as
// Resilience4j's TransitionCheckResult. The zero value asks for nothing; OpenFor and
// OpenUntil open the breaker.
type Transition struct {
	kind  transitionKind
	wait  time.Duration
	until time.Time
}

type transitionKind uint8

const (
	noTransition transitionKind = iota
	openFor
	openUntil
)

// OpenFor asks the breaker to open for d, as TransitionToOpenStateFor (Resilience4j's
// transitionToOpenAndWaitFor). A d <= 0 ends the wait at once.
func OpenFor(d time.Duration) Transition { return Transition{kind: openFor, wait: d} }

// OpenUntil asks the breaker to open until t, as TransitionToOpenStateUntil (Resilience4j's
// transitionToOpenAndWaitUntil): the right answer to a 429 or 503 carrying Retry-After.
func OpenUntil(t time.Time) Transition { return Transition{kind: openUntil, until: t} }

// Opens reports whether tr asks the breaker to open.
func (tr Transition) Opens() bool { return tr.kind != noTransition }

// transitionOnResult consults TransitionOnResult after an outcome of permit p was recorded,
// which cur reports (an outcome of an earlier period is not shown to it), and applies its
// answer to the period the outcome left the breaker in, if that is CLOSED: p's own CLOSED
// period, or, for a HALF_OPEN probe, the CLOSED period its trial has just closed into (as
// Resilience4j, so a probe answered 429 with Retry-After reopens the breaker until then). At
// most once per CLOSED period, as a threshold opening; the attempt number is not incremented.
// A function that panics asks for nothing.
func (cb *CircuitBreaker) transitionOnResult(p Permit, cur bool, result any, err error) {
	f := p.st.set.cfg.TransitionOnResult
	if f == nil || !cur {
		return
	}
	tr := safeTransition(f, result, err)
	if tr.kind == noTransition {
		return
	}
	st := cb.state.Load()
	if st.kind != Closed || st != p.st && p.st.kind != HalfOpen {
		return
	}
	wait := tr.wait
	if tr.kind == openUntil {
		wait = time.Until(tr.until)
	}
	cb.swap(st, cb.newOpen(st.attempts, st.metrics, cb.after(wait)))
}

func safeTransition(f func(any, error) Transition, result any, err error) (tr Transition) {
	defer func() {
		if recover() != nil {
			tr = Transition{}
		}
	}()
	return f(result, err)
}
