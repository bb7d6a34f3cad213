// Package retry calls a function again when it fails, waiting between attempts, until it
// succeeds, fails in a way not worth retrying, or runs out of attempts. It is the Retry pattern
// of Resilience4j, in Go terms: a call is a func(context.Context) (T, error), waits honour the
// context, and errors are classified with errors.Is and errors.As.
//
// A *Retry is built once per dependency from a named Config and shared by every call to that
// dependency, whatever the result type:
//
//	backoff, err := retry.ExponentialBackoff(100*time.Millisecond, 2, time.Second)
//	...
//	r, err := retry.New("payment", retry.Config{MaxAttempts: 3, IntervalFunction: backoff})
//	...
//	receipt, err := retry.Execute(ctx, r, func(ctx context.Context) (Receipt, error) {
//		return gateway.Charge(ctx, order)
//	})
//
// MaxAttempts counts the first call: 3 means at most 2 retries. Which errors and results are
// retried, and how the call ends in each case, is written once, on Execute. The wait before a
// retry comes from WaitDuration (constant) or an interval function: FixedInterval,
// ExponentialBackoff, RandomizedInterval, ExponentialRandomBackoff, or your own.
//
// # Beyond Resilience4j: the options Go retry libraries have
//
// Three more limits can stop a call before its attempts run out; each ends it as running out
// does, with a *MaxRetriesExceededError wrapping the last error, whose Reason says which limit
// it was (errors.Is finds ErrMaxRetriesExceeded, the Reason and the call's own error):
//
//   - Config.MaxDuration bounds one call's attempts and waits together (cenkalti/backoff's
//     MaxElapsedTime, failsafe-go's WithMaxDuration): a retry whose wait would end after it is
//     not made. Reason ErrMaxDurationExceeded.
//   - Config.Budget, a *Budget shared by every Retry guarding one dependency, bounds retries to
//     a ratio of calls over a sliding window with a reserve (Finagle's RetryBudget, gRPC's
//     retry throttling), so a dead dependency sees at most (1 + Ratio) × calls attempts, plus
//     the reserve, instead of MaxAttempts × calls. Reason ErrBudgetExhausted.
//   - Permanent(err), returned by the call, stops at once whatever the lists say
//     (backoff.Permanent, failsafe-go's AbortOn); the call ends with err, unmarked. To name
//     such errors in the Config instead, list them in IgnoreErrors, which does the same.
//
// Jittered backoffs from AWS's "Exponential Backoff And Jitter" complete the interval
// functions: FullJitterBackoff (a wait in [0, interval × 2^(attempt−1)], capped) and
// DecorrelatedJitterBackoff; WithJitter adds an absolute ± jitter to any interval function,
// where RandomizedInterval's factor is relative. Every interval constructor names the first
// wait interval. Every randomized one (RandomizedInterval, ExponentialRandomBackoff and these)
// draws from the math/rand/v2 Source given as its last argument, so that a test can fix its
// waits (rand.NewPCG(1, 2)), or from the top-level generator when it is nil; each one's comment
// gives its formula in the uniform draw u.
//
// Every call that ends counts once in one of the four outcome counters of Metrics, and
// subscribers (Subscribe) receive the events RETRY before each wait, SUCCESS when a call
// succeeds after at least one retry, ERROR when retrying stops on a failure, and IGNORED_ERROR
// when an error is not retried. Operators that run the attempts themselves (streams, futures)
// drive the same per-call state through NewContext.
//
// Execute allocates nothing on the success path when nobody subscribes to events and no result
// predicate is set, and never holds a lock while the call runs.
//
// # Logging
//
// Config.Logger, a *slog.Logger, is nil by default: nothing is logged and nothing is
// subscribed. Set, it is one more event consumer, attached by New, that checks Logger.Enabled
// before building a record and logs with LogAttrs:
//
//	r, err := retry.New("payment", retry.Config{MaxAttempts: 3, Logger: logger})
//
//	level  msg                              event    attributes
//	DEBUG  "retry attempt failed"           RETRY    attempt, wait, err (none for a result)
//	DEBUG  "retry succeeded after retries"  SUCCESS  attempt
//	INFO   "retries exhausted"              ERROR    attempt, err
//
// Every record also carries pattern=retry, name and event, the keys every levee pattern uses;
// attempt is the number of failed attempts so far, wait the time.Duration before the next one.
// IGNORED_ERROR is not logged (the error goes back to the caller at once), nor is a success on
// the first attempt; results are never logged. Records are logged with context.Background().
//
// # Differences from Resilience4j
//
//   - ChangeConfig replaces the config of a running Retry for the calls that start after it,
//     for configuration reloads; Resilience4j's Retry has no changeConfig.
//   - Rejections by levee's own patterns (an open circuit breaker, a full bulkhead, a refused
//     rate limiter: errors for which levee.IsRejection is true) are not retried, and never
//     reach RetryErrors, IgnoreErrors or RetryOnErrorPredicate: retrying a call that never
//     reached the dependency only delays the caller, and a catch-all predicate would bring that
//     back. Config.RetryRejections lists the rejections to retry;
//     RetryRejections: []error{circuitbreaker.ErrCallNotPermitted} is Resilience4j's behaviour.
//   - Exhausting the attempts on errors returns a *MaxRetriesExceededError wrapping the last
//     error, where Resilience4j rethrows the bare exception: errors.Is finds both
//     ErrMaxRetriesExceeded and the call's own error. An interval function's negative wait
//     (stop retrying) ends the call the same way.
//   - Intervals are time.Durations computed to the nanosecond, finer than Resilience4j's whole
//     milliseconds: ExponentialBackoff(4ms, 1.2, 0) gives 4ms, 4.8ms, 5.76ms where Resilience4j
//     truncates every step and stays at 4ms, and 1.5ms stays 1.5ms. Randomized intervals spread
//     to the nanosecond, without Resilience4j's +1ms. The constructors return an error instead
//     of throwing, and refuse a multiplier below 1 (a backoff that shrinks), a max below the
//     first interval, and a randomization factor of 1 (whose wait could be 0).
//   - Waits honour the context: a cancelled ctx ends the wait at once, and no further attempt
//     runs. A call that returns its caller's own cancellation is not retried. Such calls count
//     in no outcome counter.
//   - A panic in the call becomes a *levee.PanicError, classified like any other error (so it
//     is retried by default), where Resilience4j lets a Java Error escape unretried. A panic in
//     a config hook ends the call with a *levee.PanicError instead of crashing the caller.
//   - NumberOfTotalCalls counts each attempt once (Resilience4j counts the last one twice when
//     a result predicate exhausts the attempts); a call stopped by a negative wait counts as
//     failed with retry (Resilience4j counts it nowhere). IGNORED_ERROR events carry the number
//     of earlier retried attempts (Resilience4j reports 0).
//   - MaxDuration, Budget, Permanent and the jittered backoffs have no Resilience4j
//     counterpart (see above); left unset, a Retry behaves as Resilience4j's.
//   - New refuses, with the field named, what Resilience4j accepts silently: WaitDuration set
//     together with an interval function, an error list entry that could never match.
package retry
