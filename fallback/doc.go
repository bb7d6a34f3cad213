// Package fallback answers for a guarded call when it fails: a Fallback holds handlers chosen by
// the error (or, optionally, by the result), runs the one that fits, and tells the caller whether
// the answer is live or a fallback's.
//
// Execute runs a call and hands its failure to a Fallback; ExecuteOutcome also says whether a
// handler answered, in an Outcome, the type every levee composition reports too. Unlike the
// other levee patterns a Fallback is generic over the result type T, because its handlers
// produce a T. It is immutable once built by New, apart from its counters and subscribers, and
// safe for concurrent use.
//
//	f, err := fallback.New("pricing",
//		fallback.OnError(ErrNotFound, fallback.Value(Price{})),
//		fallback.OnType(func(ctx context.Context, e *GatewayError) (Price, error) { return cache.Stale(ctx) }),
//	)
//	...
//	price, out, err := fallback.ExecuteOutcome(ctx, f, pricing.Lookup)
//	if out.Fallback { ... } // not a live answer: out.Cause is the error it stands in for
//
// # Choosing a handler
//
// Handlers are built with OnError (a sentinel, matched as errors.Is), OnType (an error type,
// matched as errors.As; the handler receives the matching error typed), OnAny (the catch-all)
// and OnResult (a result to replace). For a failed call the Fallback walks the error's chain
// from the outermost error inward, depth first and in pre-order, following both Unwrap() error
// and Unwrap() []error exactly as errors.Is does, and picks the first link that a sentinel or
// type handler matches: the closest match wins. Within one link the handler listed first wins,
// as the cases of a type switch. The catch-all answers only when no link matches; with no
// catch-all the original error comes back unchanged (the same value).
//
// # The four kinds of fallback
//
// A good fallback is cheap, local and honest. The package makes the four usual kinds short to
// write: a cached value served marked stale (LastKnown), a default (Value), a degraded response
// (a handler building a partial answer, see the examples) and failing fast with a clear error
// that keeps its cause (FailFast). ExecuteOutcome, Handle and the metrics and events let a caller
// and a dashboard tell a fallback's answer from a live one.
//
// # Pitfalls refused
//
//   - Ambiguity is refused when the Fallback is built: New rejects two handlers for the same
//     sentinel or type, two catch-alls, a handler shadowed by an earlier, broader one, and nil
//     functions, instead of failing on every call, healthy ones included.
//   - An error returned by a handler keeps the original: the caller gets an *Error whose chain
//     holds both, so errors.Is finds the handler's error and the cause.
//   - A panic in the guarded call arrives as a *levee.PanicError, an error like any other that
//     OnAny or OnType[*levee.PanicError] can answer; a panic in a handler comes back as an *Error
//     wrapping a *levee.PanicError, never as a crash.
//   - The caller's own cancellation is not answered: when the caller's context is done and the
//     error is that cancellation, only a handler whose OnError target is context.Canceled or
//     context.DeadlineExceeded may answer; the catch-all does not, since nobody waits for its
//     answer. Such calls are not counted either. A timeout raised inside the call while the
//     caller still waits is an ordinary error.
//   - A fallback answers every error it matches, levee's own rejections (an open breaker, a full
//     bulkhead) included: placed outermost, it answers once everything inside has given up.
//
// # Differences from Resilience4j
//
// A Fallback plays the part of the withFallback decorators and of the fallbackMethod of the
// Spring annotations.
//
//   - Handlers are values checked when the Fallback is built, by the compiler (their
//     signature) and by New (everything else). Resilience4j resolves fallback methods by
//     reflection: it throws IllegalStateException on every call for two methods of the same
//     exception type, and ignores, with one log line, a method whose signature is almost right.
//   - Closest match follows Go's error chains, not a class hierarchy: a sentinel, a concrete
//     type or an interface type can be matched, where Resilience4j only walks superclasses and
//     never chooses an interface by closeness.
//   - A handler's error keeps the original in its chain; Resilience4j rethrows the fallback's
//     exception and loses the original.
//   - Every use is observable: Metrics counts answers, failed fallbacks and unhandled errors,
//     and Subscribe delivers an event for each. Resilience4j's fallbacks publish nothing.
package fallback
