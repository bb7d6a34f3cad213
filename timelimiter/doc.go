// Package timelimiter bounds how long a caller waits for one call, as Resilience4j's
// TimeLimiter: after TimeoutDuration the caller gets a *TimeoutError and goes on, even when the
// call ignores its context.
//
// Each execution is one attempt with its own deadline: Execute runs the call in a goroutine of
// its own with a context derived from the caller's by context.WithTimeout, and waits for
// whichever comes first:
//
//   - the call returns: its value and error come back unchanged (a SUCCESS or ERROR event);
//   - the deadline passes: the caller gets a *TimeoutError at once (a TIMEOUT event), which
//     matches ErrTimeout and context.DeadlineExceeded with errors.Is, and the attempt's
//     context is cancelled so that a call that honours it stops;
//   - the caller's own context ends: the caller gets an error matching ctx.Err() at once. That
//     is the caller's decision, not a timeout: no event, nothing counted.
//
// Execute keeps no state between calls, so inside a retry every attempt gets a fresh deadline
// and a timeout is an ordinary failure of that attempt.
//
//	tl, err := timelimiter.New("inventory", timelimiter.Config{TimeoutDuration: 200 * time.Millisecond})
//	...
//	stock, err := timelimiter.Execute(ctx, tl, inventory.Lookup)
//	if errors.Is(err, timelimiter.ErrTimeout) { ... }
//
// # Abandoned calls
//
// Go cannot stop a goroutine from outside: a call that ignores its context keeps running after
// the caller has given up on it. Its goroutine ends when the call returns, its result is
// dropped, and until then it is counted in Metrics().NumberOfAbandonedCalls, so that a
// dependency that leaks goroutines this way shows up in the metrics. A panic in such a goroutine
// is recovered and becomes a *levee.PanicError, never a crash of the process.
//
// # How levee differs from Resilience4j, and why
//
//   - Resilience4j cancels the running future with an interrupt when cancelRunningFuture is
//     true, and its CompletionStage variant never cancels the work at all. levee always
//     cancels the attempt's context at the deadline, unless DisableCancelRunningFuture is set;
//     then the attempt's context is cancelled only when the call returns, so that a call
//     allowed to outlive its deadline still has its resources released.
//   - The attempt's context and its timer are released as soon as the call returns, not only
//     on timeout.
//   - A call that returns at its deadline an error matching context.DeadlineExceeded was
//     stopped by the attempt's deadline: it is reported as a timeout (the *TimeoutError keeps
//     the call's error in its chain), so the outcome does not depend on which goroutine the
//     scheduler ran first.
//   - The caller's own cancellation is neither a timeout nor an error of the call.
//
// # Cost
//
// A time limiter cannot avoid allocating: each execution needs a goroutine, a context with a
// timer and a small record shared by the caller and the goroutine: 7 allocations, 5 of them
// context.WithTimeout's.
package timelimiter
