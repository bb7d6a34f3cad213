// Package retry repeats a failed call, as Resilience4j's Retry does, with the waits between
// attempts computed by an interval function (fixed, exponential, randomized or both).
//
// A *Retry is built once per dependency from a named Config and shared by every call to that
// dependency, whatever the result type:
//
//	r, err := retry.New("payment", retry.Config{MaxAttempts: 3, IntervalFunction: backoff})
//	...
//	receipt, err := retry.Execute(ctx, r, func(ctx context.Context) (Receipt, error) {
//		return gateway.Charge(ctx, order)
//	})
//
// # Semantics (Resilience4j 2.x)
//
// MaxAttempts counts the first call: 3 means at most 2 retries. After a failed attempt the
// error is classified: it is retried when it matches RetryErrors or RetryOnErrorPredicate (every
// error when neither is set) and does not match IgnoreErrors — ignoring always wins. An error
// that is not retried is returned at once, unchanged, even after earlier retries. A returned
// value is retried when RetryOnResultPredicate matches it. Before retry n (n = failed attempts so
// far, 1 before the first retry) the interval function gives the wait; Retry never waits after
// the final attempt, and a negative interval stops retrying.
//
// When the attempts run out on errors, Execute returns a *MaxRetriesExceededError that wraps the
// last error: errors.Is finds both ErrMaxRetriesExceeded and the call's own error, and the message
// says how many attempts were made. When they run out on results, the last result is returned
// with a nil error, unless FailAfterMaxAttempts is set: then the error is a
// *MaxRetriesExceededError carrying that result.
//
// Every call that ends counts once in one of the four outcome counters of Metrics (successful or
// failed, with or without a retry attempt) — a call abandoned through its caller's cancellation
// counts in none — and publishes Resilience4j's events: RETRY before each wait, SUCCESS when a
// call succeeds after at least one retry (a first-try success publishes nothing), ERROR when
// retries are exhausted or stopped, IGNORED_ERROR when an error is not retried.
//
// # Differences from Resilience4j, and why
//
//   - Rejections by levee's own patterns (an open circuit breaker, a full bulkhead, a refused rate
//     limiter: errors for which levee.IsRejection is true) are not retried unless RetryErrors or
//     RetryOnErrorPredicate matches them explicitly. Retrying a call that never reached the
//     dependency only delays the caller (the composition pitfall of Resilience4j's defaults).
//   - Waits honour the context: a cancelled ctx ends the wait at once with an error that matches
//     ctx.Err() and wraps the last error, and no further attempt runs. A call that returns its
//     caller's own cancellation is not retried, and such calls are counted in no outcome counter.
//   - A panic in the call becomes a *levee.PanicError and is classified like any other error, so
//     it is retried by default (Resilience4j lets a Java Error escape unretried). List
//     levee.ErrorType[*levee.PanicError]() in IgnoreErrors to stop retrying panics. A panic in a
//     config hook (a predicate, an interval function, ConsumeResultBeforeRetryAttempt) ends the
//     call with a *levee.PanicError, counted as a failed call, instead of crashing the caller.
//   - Exhausting the attempts on errors wraps the last error (see above) so the error says the
//     attempts; Resilience4j rethrows the bare exception.
//   - NumberOfTotalCalls counts each attempt once; Resilience4j counts the last attempt twice
//     when a result predicate exhausts the attempts. An interval function's negative interval
//     (stop retrying) counts the call as failed with retry; Resilience4j publishes the ERROR
//     event but counts it nowhere.
//   - Interval functions are Go functions returning a time.Duration; the constructors keep
//     Resilience4j's millisecond arithmetic exactly and return an error instead of throwing.
//     ExponentialBackoff refuses a multiplier below 1, which Resilience4j accepts and which
//     shrinks the interval to zero.
//
// Execute allocates nothing on the success path when nobody subscribes to events and no result
// predicate is set, and never holds a lock while the call runs: the per-call state lives in a
// Context value on the caller's stack. Operators that drive attempts themselves (streams,
// futures) use the same Context through NewContext.
package retry
