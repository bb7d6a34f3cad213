package levee

import (
	"context"

	"github.com/levee-go/levee/internal/callobs"
)

// CallObserver receives what happens to the calls whose context carries it (see
// WithCallObserver): each attempt of a retry, each wait before one, each rejection by a
// breaker, bulkhead or rate limiter, each fallback answer, and each breaker transition seen
// while the call ran through the breaker. OnCallEvent is called synchronously on the call's
// goroutine, with the context the pattern saw (the call's, or an attempt's derived from it,
// so trace.SpanFromContext finds the call's span): it must be quick and must not block.
//
// It is the per-call counterpart of the patterns' Subscribe, whose events carry no context:
// leveeotel's tracing writes these events on the call's own span. Resilience4j has no
// per-call observer; its events are per instance only.
type CallObserver = callobs.Observer

// CallEvent is one thing that happened to one call: its Kind; Pattern, the kind of the
// pattern that reported it ("retry", "circuitbreaker", "bulkhead", "ratelimiter", "fallback");
// Name, the instance's name; and, by kind, Attempt (the attempt's number, 1 for the first;
// for a wait, the number of the attempt it precedes), Wait (the wait's length), Err (the
// attempt's error, nil for a success; the rejection; the failure a fallback answered), and
// From and To (the breaker's states, as State.String spells them).
type CallEvent = callobs.Event

// CallEventKind is the kind of a CallEvent.
type CallEventKind = callobs.Kind

// The kinds of CallEvent.
const (
	// CallAttempt: an attempt of a retry returned (Attempt, Err).
	CallAttempt CallEventKind = callobs.Attempt
	// CallWait: a retry waits Wait (> 0) before attempt Attempt; a retry going on at once
	// reports none.
	CallWait CallEventKind = callobs.Wait
	// CallRejection: a breaker, bulkhead or rate limiter refused the call with Err (not the
	// caller's own cancellation); what it guards did not run.
	CallRejection CallEventKind = callobs.Rejection
	// CallFallback: a fallback answered the failure Err.
	CallFallback CallEventKind = callobs.Fallback
	// CallTransition: the breaker's state went From To while the call ran through it. The
	// call's permission (OPEN to HALF_OPEN) or its outcome moved it, or another call did at
	// the same time; a call that panicked reports none.
	CallTransition CallEventKind = callobs.Transition
)

// WithCallObserver returns ctx carrying o, so that every levee pattern a call with that
// context (or one derived from it) runs through reports its CallEvents to o. A nil o returns
// ctx unchanged. It allocates the context, once per call it is used for; a context without an
// observer costs the patterns nothing and allocates nothing.
//
// The patterns look for it where each event happens: a retry once per Execute, a breaker,
// bulkhead, rate limiter or fallback only when it refuses, answers or changes state, so that
// a successful call through a breaker, bulkhead or rate limiter never looks at the context.
func WithCallObserver(ctx context.Context, o CallObserver) context.Context {
	return callobs.With(ctx, o)
}

// CallObserverFrom returns the CallObserver ctx carries, or nil.
func CallObserverFrom(ctx context.Context) CallObserver { return callobs.From(ctx) }
