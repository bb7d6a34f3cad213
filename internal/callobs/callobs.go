// Package callobs carries a per-call observer in a call's context: the patterns' Execute
// functions report what happens to that one call (an attempt, a wait, a rejection, a
// fallback, a breaker transition) to the observer found in the call's context, with that
// context, so that an observer can write them on the call's own trace span. levee exports it
// as levee.CallObserver and levee.WithCallObserver.
//
// A pattern consults the context only where the event happens, and most events happen on a
// failure's path (a rejection, a wait, a fallback); a retry looks once per Execute, and a
// breaker looks only when its state changed during the call. With no observer in the
// context, nothing is allocated and nothing else is done.
package callobs

import (
	"context"
	"time"
)

// Kind is the kind of an Event.
type Kind uint8

// The kinds of events.
const (
	// Attempt: a retry's attempt returned; Attempt is its number (1 for the first), Err its
	// error (nil for a success).
	Attempt Kind = iota + 1
	// Wait: a retry waits Wait (> 0) before attempt Attempt; a retry that goes on at once
	// reports no wait.
	Wait
	// Rejection: a pattern refused the call (Err: an open breaker, a full bulkhead, a refused
	// rate limit); the call inside it did not run.
	Rejection
	// Fallback: a fallback answered the failure Err instead of the call.
	Fallback
	// Transition: the breaker went from From to To while the call ran through it (the call's
	// outcome, or its permission, moved it, or another call did at the same time).
	Transition
)

// Event is what happened to one call. Pattern is the kind of the pattern ("retry",
// "circuitbreaker", "bulkhead", "ratelimiter", "fallback") and Name the instance's name.
type Event struct {
	Kind     Kind
	Pattern  string
	Name     string
	Attempt  int
	Wait     time.Duration
	Err      error
	From, To string
}

// Observer receives the events of the calls whose context carries it. ctx is the context the
// pattern saw (the call's, or an attempt's derived from it). It runs on the call's goroutine,
// synchronously: it must be quick and must not block.
type Observer interface {
	OnCallEvent(ctx context.Context, e Event)
}

type key struct{}

// With returns ctx carrying o; a nil o returns ctx unchanged.
func With(ctx context.Context, o Observer) context.Context {
	if o == nil {
		return ctx
	}
	return context.WithValue(ctx, key{}, o)
}

// From returns the observer ctx carries, or nil.
func From(ctx context.Context) Observer {
	o, _ := ctx.Value(key{}).(Observer)
	return o
}

// Report gives e to the observer of ctx, if any.
func Report(ctx context.Context, e Event) {
	if o := From(ctx); o != nil {
		o.OnCallEvent(ctx, e)
	}
}
