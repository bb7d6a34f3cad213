// Package bulkhead limits how many calls to one dependency run at the same time, as
// Resilience4j's SemaphoreBulkhead: a slow dependency then holds at most MaxConcurrentCalls
// goroutines, and the rest of the program keeps its own.
//
// A call takes a permit before it runs and gives it back when it ends. When every permit is
// taken, a newcomer waits at most MaxWaitDuration for one (by default it does not wait) and is
// then refused with a *BulkheadFullError, which matches ErrBulkheadFull. Waiters are served
// first come, first served, and a newcomer never barges ahead of a queued waiter, unless
// DisableFairCallHandling is set.
//
//	bh, err := bulkhead.New("payment", bulkhead.Config{MaxConcurrentCalls: 3})
//	...
//	receipt, err := bulkhead.Execute(ctx, bh, gateway.Charge)
//
// Execute and Decorate run a call under a permit. Acquire, TryAcquire, Release and
// ReleasePermission are the low-level permit API that stream operators and futures build on.
//
// # How levee differs from Resilience4j, and why
//
//   - Waiting honours the caller's context as well as MaxWaitDuration: a caller whose context
//     ends while it waits gets an error matching ctx.Err() (not ErrBulkheadFull) and takes no
//     permit, as Resilience4j's interrupted caller. A call whose caller cancels while it runs
//     gives its permit back without a CALL_FINISHED event, as Resilience4j's cancellation path.
//   - A panic in the call releases the permit and comes back as a *levee.PanicError.
//   - ChangeMaxConcurrentCalls never blocks. Resilience4j's changeConfig blocks the caller of a
//     shrink until the surplus permits come back; levee instead lets the calls already running
//     finish and admits no new call until fewer than the new maximum are in flight. Available
//     permits are clamped at 0 meanwhile, so the invariant
//     available = max(0, MaxConcurrentCalls − in flight) holds at every moment.
//   - A Release without a matching acquisition is ignored rather than creating a permit, so a
//     bug in the caller can never lift the limit.
//   - MaxConcurrentCalls must be at least 1: the zero value of the field means the default of
//     25, and a bulkhead that refuses everything is better expressed by not calling at all.
//
// The waiting time has nanosecond resolution (Resilience4j truncates to milliseconds).
//
// # Cost
//
// When nobody waits, acquiring and releasing a permit is one compare-and-swap each on a word
// that packs the maximum and the number of calls in flight: no lock, no allocation. The mutex
// and the FIFO queue of waiters are touched only when a caller has to wait.
package bulkhead
