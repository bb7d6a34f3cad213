// Package ratelimiter limits how many calls may start per period of time, with the semantics of
// Resilience4j's AtomicRateLimiter.
//
// # Cycles and permissions
//
// Time, measured from the moment the limiter was created, is cut into cycles of
// LimitRefreshPeriod: cycle c runs from c×LimitRefreshPeriod to (c+1)×LimitRefreshPeriod after
// New. Each cycle has LimitForPeriod permissions; cycle 0 starts full. Permissions a cycle does
// not hand out are lost when it ends: they never carry over, so a limiter that was idle still
// admits at most LimitForPeriod calls in its next cycle.
//
// A caller asks for n permissions (1 ≤ n ≤ LimitForPeriod). When the current cycle still has
// them, they are taken at once. Otherwise the caller may reserve permissions of a future cycle:
// it takes the next free ones, in order, and must wait until the cycle of the last of them
// begins. The reservation is made only when that wait fits in TimeoutDuration; while permissions
// are reserved, Metrics reports negative available permissions (minus the number reserved
// beyond the current cycle), exactly as Resilience4j.
//
// AcquirePermission takes or reserves and then waits; ReservePermission takes or reserves and
// returns the wait, leaving the waiting to the caller (as Resilience4j's reactive operators
// do); Execute and Decorate guard a call with one permission, and after the call evaluate
// Config.DrainPermissionsOnResult, which may drain the rest of the cycle (for example when the
// dependency answered "429 Too Many Requests").
//
// # Differences from Resilience4j
//
// levee keeps the model and the formulas and removes three pitfalls:
//
//   - A caller whose wait cannot fit in TimeoutDuration is refused at once with
//     ErrRequestNotPermitted. Resilience4j parks such a caller for the whole timeout first, only
//     to refuse it then; nothing it could do during that time would change the answer. For the
//     same reason AcquirePermission refuses at once a wait that would outlast the deadline of
//     its context, rather than reserve permissions its caller cannot use.
//   - A waiter whose context is cancelled gives its reservation back, when it is still the last
//     reservation, so the permissions go to the next caller. Resilience4j keeps the reservation
//     of an interrupted thread. A reservation followed by others is not given back: its
//     permissions stay unused, because handing them out again would move the later callers'
//     permissions into an earlier cycle while they still wait for theirs, and one cycle would
//     admit more than LimitForPeriod.
//   - DrainPermissions empties the current cycle, also right after a cycle rollover (Resilience4j
//     computes the drain from its stale stored cycle and may leave the new cycle full), and it
//     keeps the reservations already granted: those callers wait for their cycles and take those
//     cycles' permissions, so no later cycle over-admits. Resilience4j wipes them.
//
// Smaller differences: asking for more than LimitForPeriod permissions at once is an error
// (ErrInvalidPermits) rather than a reservation of several whole cycles; after
// ChangeLimitForPeriod, the cycles that already hold reservations keep their limit (their
// waiters were promised those cycles) where Resilience4j recounts the reservations with the new
// limit, which can admit more than either limit in one cycle; the Drained event reports the
// permissions removed; and LimitForPeriod × (TimeoutDuration/LimitRefreshPeriod + 2) is bounded
// by MaxReservablePermissions, far above any practical setting, so that the state fits in one
// word.
//
// # Concurrency
//
// The limiter is lock-free: all its state is one 64-bit word, a cursor over the sequence of
// permissions, updated with a single compare-and-swap per request; the source documents the model and proves
// it equal to Resilience4j's. Waiting happens after the swap, on a timer, outside
// every lock. Events are delivered synchronously to subscribers, outside every lock, and are
// only built when someone subscribes, so that the path that takes a permission without waiting
// allocates nothing.
package ratelimiter
