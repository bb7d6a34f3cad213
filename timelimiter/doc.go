// Package timelimiter bounds how long a caller waits for one call: after TimeoutDuration the
// caller gets a *TimeoutError and goes on, even when the call ignores its context.
//
// Execute runs the call in a goroutine of its own with a context derived from the caller's by
// context.WithTimeout, and returns whichever comes first:
//
//   - the call returns: its value and error, unchanged (a SUCCESS or ERROR event);
//   - the deadline passes: a *TimeoutError at once (a TIMEOUT event), which matches
//     ErrTimeout and context.DeadlineExceeded with errors.Is; the call's context is cancelled
//     so that a call that honours it stops;
//   - the caller's own context ends: an error matching ctx.Err() at once. That is the
//     caller's decision, not a timeout: no event, nothing counted.
//
// A result the call has already produced wins over the deadline and over the caller's
// cancellation; Execute's documentation says exactly when a result counts as produced.
//
// A TimeLimiter keeps no state between calls, so inside a retry every attempt gets a fresh
// deadline and a timeout is an ordinary failure of that attempt. One TimeLimiter serves calls
// of any result type; it is safe for concurrent use.
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
// is recovered and becomes a *levee.PanicError, never a crash of the process. The
// per-emission operators of package stream and the rxgo operators module count these
// goroutines and close their output only once they have ended.
//
// # Cost
//
// A time limiter cannot avoid allocating: each execution needs a goroutine, a context with a
// timer and a small record shared by the caller and the goroutine, 7 allocations, 5 of them
// context.WithTimeout's. A timeout adds its *TimeoutError.
//
// # Logging
//
// Config.Logger, a *slog.Logger, is nil by default: nothing is logged and nothing is
// subscribed. Set, it is one more event consumer, attached by New, that checks Logger.Enabled
// before building a record and logs each TIMEOUT event at Debug:
//
//	tl, err := timelimiter.New("payment", timelimiter.Config{TimeoutDuration: time.Second, Logger: logger})
//
//	level=DEBUG msg="time limiter call timed out" pattern=timelimiter name=payment event=TIMEOUT err="..."
//
// with the keys every levee pattern uses; err is the *TimeoutError. SUCCESS and ERROR, calls
// that ended in time, are not logged: one record per call would flood the log, and the caller
// has the error. Records are logged with context.Background().
//
// # Differences from Resilience4j
//
//   - ChangeConfig replaces the config of a running TimeLimiter for the calls that start
//     after it, for configuration reloads; Resilience4j's TimeLimiter has no changeConfig.
//   - The running call is stopped by cancelling its context, Go's interrupt, at the deadline
//     unless DisableCancelRunningFuture is set (cancelRunningFuture = false); then the context
//     is cancelled only when the call returns, so that its resources are still released.
//     Resilience4j's CompletionStage variant never cancels the work at all.
//   - The attempt's context and its timer are released as soon as the call returns, not only
//     on timeout.
//   - A call that returns at its deadline an error matching context.DeadlineExceeded was
//     stopped by that deadline: it is reported as a timeout (the *TimeoutError keeps the
//     call's error in its chain), so the outcome does not depend on which goroutine the
//     scheduler ran first.
//   - The caller's own cancellation is neither a timeout nor an error of the call, and nothing
//     records it.
//   - TimeoutDuration has nanosecond resolution.
package timelimiter
