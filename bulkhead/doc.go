// Package bulkhead bounds how many calls to one dependency run at the same time: a counting
// semaphore of MaxConcurrentCalls permits, shared by every goroutine that calls the
// dependency, so that a slow dependency holds at most that many goroutines and the rest of
// the program keeps its own.
//
// A call takes a permit before it runs and gives it back when it ends. When every permit is
// taken, a newcomer waits at most MaxWaitDuration for one (by default it does not wait), or
// until its context ends, and is then refused with the bulkhead's *BulkheadFullError, which
// matches ErrBulkheadFull. Waiters are served first come, first served, and a newcomer never
// takes a permit ahead of a queued waiter, unless DisableFairCallHandling is set.
//
//	bh, err := bulkhead.New("payment", bulkhead.Config{MaxConcurrentCalls: 3})
//	...
//	receipt, err := bulkhead.Execute(ctx, bh, gateway.Charge)
//
// Execute runs one call under a permit. Acquire, TryAcquire, Release and ReleasePermission
// are the permit API that stream operators and futures build on; every successful acquisition
// is paired with exactly one release. ChangeConfig resizes the bulkhead and changes its
// waiting rules while calls are in flight; NoConcurrentCalls refuses every call. Metrics and
// Subscribe (CALL_PERMITTED, CALL_REJECTED, CALL_FINISHED events) observe it.
//
// When nobody waits, acquiring and releasing a permit is one compare-and-swap each on a word
// that packs the maximum and the number of calls in flight: no lock, no allocation. A
// rejection allocates nothing either: it returns the bulkhead's one preallocated error. The
// mutex and the FIFO queue of waiters are touched only when a caller has to wait.
//
// The semantics are those of Resilience4j's SemaphoreBulkhead, with the configuration
// fields, metrics and events of the same names.
//
// # Logging
//
// Config.Logger, a *slog.Logger, is nil by default: nothing is logged and nothing is
// subscribed. Set, it is one more event consumer, attached by New, that checks Logger.Enabled
// before building a record and logs each CALL_REJECTED event at Debug:
//
//	bh, err := bulkhead.New("payment", bulkhead.Config{MaxConcurrentCalls: 3, Logger: logger})
//
//	level=DEBUG msg="bulkhead call rejected" pattern=bulkhead name=payment event=CALL_REJECTED
//
// with the keys every levee pattern uses. CALL_PERMITTED and CALL_FINISHED, one of each per
// call, are not logged. Records are logged with context.Background(). ChangeConfig replaces
// the logger like every other field, so the round trip through Config keeps it.
//
// # Differences from Resilience4j
//
//   - Waiting honours the caller's context as well as MaxWaitDuration: a caller whose context
//     ends while it waits gets an error matching ctx.Err() (not ErrBulkheadFull) and takes no
//     permit, as an interrupted thread in Resilience4j. A call whose caller cancels while it
//     runs gives its permit back without a CALL_FINISHED event, as Resilience4j's cancellation
//     path (releasePermission).
//   - A panic in the call releases the permit and comes back as a *levee.PanicError.
//   - ChangeConfig never blocks. Resilience4j's changeConfig blocks the caller of a shrink
//     until the surplus permits come back; levee lets the calls already running finish and
//     admits no new call until fewer than the new maximum are in flight. Available permits
//     are clamped at 0 meanwhile, so available = max(0, MaxConcurrentCalls − in flight) at
//     every moment.
//   - ChangeConfig applies a new fairness to the callers that arrive after it; Resilience4j
//     keeps the fairness its semaphore was created with. In both, a new MaxWaitDuration
//     applies to later callers and a caller already waiting keeps its deadline.
//   - A Release without a matching acquisition is ignored rather than creating a permit, so a
//     bug in the caller can never lift the limit.
//   - An explicit "no permits" is NoConcurrentCalls, because the zero value of
//     MaxConcurrentCalls means the default of 25; Resilience4j writes it 0.
//   - MaxWaitDuration has nanosecond resolution; Resilience4j truncates it to milliseconds.
package bulkhead
