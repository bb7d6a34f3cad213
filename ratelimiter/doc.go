// Package ratelimiter limits how many calls may start per period of time: a limiter shared by
// every goroutine that calls one dependency hands out at most LimitForPeriod permissions per
// cycle of LimitRefreshPeriod, and a caller that finds none either waits for a permission of a
// later cycle, at most TimeoutDuration and never past its context, or is refused at once with
// the limiter's *RequestNotPermittedError, which matches ErrRequestNotPermitted.
//
//	rl, err := ratelimiter.New("search", ratelimiter.Config{
//		LimitForPeriod:     10,
//		LimitRefreshPeriod: time.Second,
//		TimeoutDuration:    200 * time.Millisecond,
//	})
//	...
//	hits, err := ratelimiter.Execute(ctx, rl, index.Query)
//
// # Cycles and permissions
//
// Time, measured on the monotonic clock from the moment the limiter was created, is cut into
// cycles of LimitRefreshPeriod: cycle c runs from c×LimitRefreshPeriod to
// (c+1)×LimitRefreshPeriod after New. Each cycle has LimitForPeriod permissions; cycle 0
// starts full. Permissions a cycle does not hand out are lost when it ends: they never carry
// over, so a limiter that was idle still admits at most LimitForPeriod calls in its next cycle.
//
// A caller asks for n permissions (1 ≤ n ≤ LimitForPeriod). When the current cycle still has
// them, they are taken at once. Otherwise the caller may reserve permissions of a future cycle:
// it takes the next free ones, in order, and must wait until the cycle of the last of them
// begins. The reservation is made only when that wait fits in TimeoutDuration; while
// permissions are reserved, Metrics reports negative available permissions (minus the number
// reserved beyond the current cycle).
//
// AcquirePermission takes or reserves and then waits; ReservePermission takes or reserves and
// returns the wait, leaving the waiting to the caller; Execute guards one call with one
// permission and then offers its outcome to Config.DrainPermissionsOnResult, which may drain
// the rest of the cycle (for example when the dependency answered "429 Too Many Requests").
// ChangeLimitForPeriod and ChangeTimeoutDuration change the limiter while it is in use.
// Metrics and Subscribe observe it.
//
// All the limiter's state is one 64-bit word, a cursor over the sequence of permissions,
// updated with a single compare-and-swap per request (the source documents the model and shows
// it equal to Resilience4j's). The swap is lock-free, except while goroutines on several cores
// acquire at the same instants: a lost swap makes the acquires of the next 10 ms take a mutex
// around it, which costs less than the cores taking the word from each other on every
// acquire, and the permissions, errors and waits are the same either way. Waiting happens
// after the swap, on a timer, outside every lock. Taking a free permission reads the clock once and allocates nothing; a
// refusal allocates nothing either, it returns the limiter's one preallocated error. Events are
// delivered synchronously to subscribers and are only built when someone subscribes.
//
// The model, the formulas and the names are those of Resilience4j's AtomicRateLimiter.
//
// # Logging
//
// Config.Logger, a *slog.Logger, is nil by default: nothing is logged and nothing is
// subscribed. Set, it is one more event consumer, attached by New, that checks Logger.Enabled
// before building a record and logs with LogAttrs:
//
//	rl, err := ratelimiter.New("payment", ratelimiter.Config{
//		LimitForPeriod: 10, LimitRefreshPeriod: time.Second, Logger: logger,
//	})
//
//	level  msg                                      event           attributes
//	DEBUG  "rate limiter permission not acquired"   FAILED_ACQUIRE  err
//	DEBUG  "rate limiter permissions drained"       DRAINED
//
// Every record also carries pattern=ratelimiter, name and event, the keys every levee pattern
// uses; err is the *RequestNotPermittedError, or the context's error of a wait it ended.
// SUCCESSFUL_ACQUIRE, one per call, is not logged. Records are logged with
// context.Background(). ChangeLimitForPeriod and ChangeTimeoutDuration keep the logger, and
// Config returns it.
//
// # Differences from Resilience4j
//
//   - A caller whose wait cannot fit in TimeoutDuration is refused at once. Resilience4j parks
//     such a caller for the whole timeout first, only to refuse it then. For the same reason
//     AcquirePermission refuses at once a wait that would outlast the deadline of its context.
//   - A waiter whose context is cancelled gives its reservation back when it is still the last
//     reservation, so the permissions go to the next caller; Resilience4j keeps the reservation
//     of an interrupted thread. A reservation followed by others is not given back: handing its
//     permissions out again would move the later callers' permissions into an earlier cycle
//     while they still wait for theirs, and one cycle would admit more than LimitForPeriod.
//   - DrainPermissions empties the current cycle, also right after a cycle rollover
//     (Resilience4j computes the drain from its stale stored cycle and may leave the new cycle
//     full), and keeps the reservations already granted: those callers wait for their cycles
//     and take those cycles' permissions, so no later cycle over-admits. Resilience4j wipes
//     them. The Drained event reports the permissions removed, where Resilience4j reports
//     min(permissions, 0).
//   - ChangeLimitForPeriod applies the new limit from the next cycle and counts the
//     reservations of that cycle against it, as Resilience4j. When reservations reach further
//     than the next cycle, the cycles before the last one holding them keep their old limit:
//     their waiters proceed there whatever the new limit, and Resilience4j, which recounts them
//     with the new limit, can then admit more than either limit in one cycle.
//   - DrainPermissionsOnResult never sees a rejection by another levee pattern (an inner
//     bulkhead or breaker refused the call, which never reached the dependency): a predicate
//     that drains on every error does not drain the limiter because a bulkhead was full.
//     Resilience4j hands it every exception.
//   - Asking for more than LimitForPeriod permissions at once is an error (ErrInvalidPermits)
//     rather than a reservation of several whole cycles.
//   - LimitForPeriod × (TimeoutDuration/LimitRefreshPeriod + 2) is bounded by
//     MaxReservablePermissions, far above any practical setting, so that the state fits in one
//     word.
//   - "No timeout" is NoWait, because the zero value of TimeoutDuration means the default
//     of 5s.
package ratelimiter
