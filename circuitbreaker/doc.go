// Package circuitbreaker is Resilience4j's CircuitBreaker for Go: a state machine that stops
// calling a dependency while it keeps failing or answering slowly, then lets a few probes
// through to find out whether it has recovered.
//
// # Semantics
//
// The behaviour is Resilience4j 2.x's, item by item:
//
//   - CLOSED records every outcome in a sliding window: CountBased holds exactly the last
//     SlidingWindowSize outcomes, TimeBased the outcomes of the last SlidingWindowSize seconds
//     in per-second buckets aligned to the epoch second of time.Now (a call recorded at second
//     s leaves when the clock reaches s+N; reads move the window too). Recording is O(1)
//     (amortised for TimeBased) and memory is O(N).
//   - Rates are float32 percentages computed as failed*100/calls, like Java's float, and are
//     -1 until the window holds the minimum number of calls: min(MinimumNumberOfCalls,
//     SlidingWindowSize) for a CountBased window, MinimumNumberOfCalls for a TimeBased one. A
//     call is slow when it takes strictly longer than SlowCallDurationThreshold; a slow
//     failure counts as failed, slow and slow failed.
//   - When either rate reaches its threshold (>=) the breaker opens. OPEN refuses calls with a
//     *CallNotPermittedError (ErrCallNotPermitted) until time.Now() is strictly after the end
//     of the wait; the first permission request after that moves it to HALF_OPEN, or a timer
//     does when AutomaticTransitionFromOpenToHalfOpenEnabled is set. Reading State never
//     moves it. OPEN keeps the metrics of the state it came from; every other entry starts
//     fresh.
//   - HALF_OPEN admits PermittedNumberOfCallsInHalfOpenState probes into a count-based window
//     of that size and decides after min(MinimumNumberOfCalls,
//     PermittedNumberOfCallsInHalfOpenState) outcomes: OPEN again if a threshold is reached,
//     CLOSED otherwise. Reopenings without a
//     pass through CLOSED number the attempts given to WaitIntervalFunctionInOpenState.
//   - Errors are classified ignore first, then record (see OnError); a result predicate can
//     turn a returned value into a failure. DISABLED, FORCED_OPEN and METRICS_ONLY, the
//     transition table, Reset, events and metrics are Resilience4j's too.
//
// # Using it
//
// Execute and Decorate guard a func(ctx) (T, error); the breaker itself is not generic, so one
// breaker per dependency serves calls of every result type. Operators, futures and other
// integrations use the permit API: TryAcquirePermission, then exactly one of OnSuccess,
// OnError, OnResult or ReleasePermission.
//
// # Where levee differs from Resilience4j, and why
//
//   - A panic in the guarded call is recorded as a failure (even when RecordErrors does not
//     list it; only the ignore lists can exempt it) and comes back as a *levee.PanicError. Resilience4j lets a Java Error through unrecorded and
//     leaks the HALF_OPEN permit, which can leave the breaker stuck in HALF_OPEN.
//   - A call ended by its caller's own cancellation is not recorded and hands its permission
//     back: the caller gave up, the dependency did not fail.
//   - A rejection by another levee pattern (an inner bulkhead, rate limiter or breaker,
//     levee.IsRejection) is ignored unless RecordErrors or RecordErrorPredicate matches it
//     explicitly: the dependency was never called, so it says nothing about its health.
//   - Execute hands a HALF_OPEN permit back only to the HALF_OPEN period that granted it, so a
//     slow call from an earlier period cannot enlarge a later period's probe budget.
//     ReleasePermission releases into the current state, as Resilience4j.
//   - The state is an atomic pointer and transitions are compare-and-swap from the exact
//     period they leave, so automatic timers that fire late, and concurrent outcomes, can
//     never cause a second or a stale transition. A refusal on the lazy OPEN→HALF_OPEN path
//     publishes one NOT_PERMITTED event (Resilience4j publishes two).
//   - There is no clock to inject: the breaker uses time.Now, time.Since and time.AfterFunc,
//     which tests drive with testing/synctest. Durations are kept at nanosecond resolution.
//   - MaxWaitDurationInHalfOpenState below 1ms (other than 0) is refused by New rather than
//     silently meaning "wait forever".
//   - Event consumers run outside every lock and may call back into the breaker.
package circuitbreaker
