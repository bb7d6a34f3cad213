// Package circuitbreaker stops calling a dependency while it keeps failing or answering
// slowly, then lets a few probe calls through to find out whether it has recovered.
//
// A *CircuitBreaker is created once per dependency with New and shared by every goroutine
// that calls it; it is not generic, so one breaker serves calls of every result type. Guard a
// call with Execute:
//
//	v, err := circuitbreaker.Execute(ctx, cb, func(ctx context.Context) (Quote, error) {
//		return pricing.Quote(ctx, sku)
//	})
//
// A refused call is not run and returns a *CallNotPermittedError, which matches
// ErrCallNotPermitted. Code that cannot wrap the call in one function (a stream, a future, a
// callback) uses the permit API instead: Acquire returns a Permit value, and the call is
// reported on it exactly once with OnSuccess, OnError, OnResult or Release. The permit measures
// the call itself (a caller that already timed it gives its own duration to
// OnSuccessWithDuration, OnErrorWithDuration or OnResultWithDuration, as Resilience4j's
// onSuccess(duration, unit)) and reports to the period that granted it: a period is one stay in one state,
// begun by a transition (even into the same state) or Reset, and a call's outcome counts only
// if its period is still the current one when the call ends (see Permit).
//
// # States
//
// CLOSED records every outcome in a sliding window: CountBased holds exactly the last
// SlidingWindowSize outcomes, TimeBased the outcomes of the last SlidingWindowSize seconds in
// one-second buckets counted from the instant New ran (a call recorded during second s leaves
// when the clock reaches second s+N; reading the metrics moves the window too). Rates are
// float32 percentages, failed*100/calls, and are -1 until the window holds the minimum number
// of calls: min(MinimumNumberOfCalls, SlidingWindowSize) for a CountBased window,
// MinimumNumberOfCalls for a TimeBased one. A call is slow when it takes strictly longer than
// SlowCallDurationThreshold; a slow failure counts as failed, slow and slow failed (see
// "Timing" for the precision of that judgement).
//
// When either rate reaches its threshold (>=) the breaker opens. OPEN refuses calls until the
// clock is strictly after the end of its wait; the first permission request after that moves
// it to HALF_OPEN, or a timer does when AutomaticTransitionFromOpenToHalfOpenEnabled is set.
// HALF_OPEN admits PermittedNumberOfCallsInHalfOpenState probes and decides after
// min(MinimumNumberOfCalls, PermittedNumberOfCallsInHalfOpenState) outcomes: OPEN again if a
// threshold is reached, CLOSED otherwise; MaxWaitDurationInHalfOpenState bounds how long it
// waits for them (then TransitionToStateAfterWaitDuration decides). Reopenings without a pass
// through CLOSED number the attempts given to WaitIntervalFunctionInOpenState. TransitionOnResult
// can open a CLOSED breaker on one call's outcome, e.g. until a 429's Retry-After.
//
// DISABLED, FORCED_OPEN and METRICS_ONLY, entered by the TransitionToXxxState methods or
// Config.InitialState, the transition table, Reset, events and metrics (Metrics) are
// Resilience4j's CircuitBreaker's, whose semantics the package follows throughout.
//
// Events reach a callback (Subscribe, or SubscribeTypes for some types only), a channel with a
// bounded buffer (Events) or an iterator (EventSeq); OnStateChange takes the transitions alone,
// typed. Publishing never waits: a full channel drops the event and counts it. Per-call figures
// since New (counts, duration sums, a decaying maximum and a duration histogram by kind, and the
// refusals) are kept by the breaker itself and read with CallStats, which is what leveeprom
// scrapes: per-call events are built only for subscribers that ask for them.
//
// Errors are classified by Permit.OnError: a rejection by another levee pattern first (only
// RecordRejections may count it), then the ignore lists, then the record lists. Every instant
// the breaker keeps is read from the monotonic clock (see "Timing"); the wall clock only stamps events. Tests
// drive the time with testing/synctest: there is no clock to inject.
//
// # Timing
//
// A call is timed on the monotonic clock, from its permit's grant to its outcome. Reading the
// clock is most of the cost of a successful call, so a breaker whose SlowCallDurationThreshold
// is 1 s or more (the default is 60 s) reads it once per call, when the call ends: the call
// starts from a reading the breaker already took (the start or end of another call) at most
// 1 ms earlier. Such a start is never later than the call's true start, so:
//
//   - durations are never under-stated, and over-stated by at most about 1 ms: by the time
//     since the breaker's latest call ended, plus up to 10 µs (an end replaces the shared
//     reading once it is 10 µs old), when that is less. Metrics' TotalDuration,
//     AverageDuration and SlowCallDuration add these durations up;
//   - a call that took longer than the threshold is always slow, one that took at most the
//     threshold less 1 ms never is, and one within that last millisecond may be judged slow:
//     the threshold keeps a precision of 1 ms, at most 0.1 % of it (0.0017 % of the 60 s
//     default).
//
// The reading is retired by a timer 1 ms after it is taken. Two things make the bound wider by
// however long they last: a late timer, on a machine whose runtime cannot run it in time, and a
// caller descheduled between taking its reading and sharing it. The timer is only armed
// again by the next call: no goroutine runs in the background, and an idle breaker does
// nothing. A threshold below 1 s is judged exactly, with two readings per call. While the
// breaker has a consumer of per-call events (Subscribe, Events, EventSeq, or SubscribeTypes
// asking for SUCCESS, ERROR or IGNORED_ERROR), every call is timed with two readings, so that
// the durations events carry are exact. Consumers of the other events only (Config.Logger,
// OnStateChange, SubscribeTypes with transitions) and leveeprom's collector, which reads
// CallStats instead of events, keep the one reading; leveeotel records each call in a
// synchronous OpenTelemetry histogram from the SUCCESS, ERROR and IGNORED_ERROR events, and so
// makes calls read both ends. CallStats' durations, sums and
// histogram buckets therefore have Metrics' precision: over-stated by at most about 1 ms, a few
// microseconds under steady load. That is a fifth of the smallest histogram bucket (5 ms), so
// only a call within 1 ms above a bucket's bound can be counted in the next bucket; a breaker
// whose histogram must be exact takes a threshold below 1 s, or a per-call subscriber. A breaker created in a testing/synctest bubble always
// reads both ends, so tests on the fake clock see exact durations. Durations given to
// OnSuccessWithDuration, OnErrorWithDuration and OnResultWithDuration are used as given.
//
// # Logging
//
// Config.Logger, a *slog.Logger, is nil by default: nothing is logged and nothing is
// subscribed (a breaker nobody observes builds no events). Set, it is one more event consumer, attached by
// New, that checks Logger.Enabled before building a record and logs with LogAttrs. It
// subscribes only to the event types below, so a successful call builds no event for it and
// costs what it costs without a logger:
//
//	breaker, err := circuitbreaker.New("payment", circuitbreaker.Config{Logger: logger})
//
//	level  msg                                        event
//	WARN   "circuit breaker state transition"         STATE_TRANSITION into OPEN or FORCED_OPEN
//	INFO   "circuit breaker state transition"         STATE_TRANSITION into any other state
//	INFO   "circuit breaker reset"                    RESET
//	INFO   "circuit breaker failure rate exceeded"    FAILURE_RATE_EXCEEDED
//	INFO   "circuit breaker slow call rate exceeded"  SLOW_CALL_RATE_EXCEEDED
//	DEBUG  "circuit breaker call not permitted"       NOT_PERMITTED
//
// Every record carries pattern=circuitbreaker, name (the breaker's) and event (the
// Resilience4j event type); a transition adds from and to (the states' names), the rate
// events add failure_rate and slow_call_rate (percent). SUCCESS, ERROR and IGNORED_ERROR are
// not logged: one record per call would flood the log, the caller already has the error, and
// Metrics counts them. Results are never logged. Records are logged with
// context.Background(), since a transition may come from a timer rather than a call. The
// other patterns log with the same keys.
//
// # Differences from Resilience4j
//
//   - ChangeConfig replaces the config of a running breaker from its next state transition,
//     for configuration reloads; Resilience4j's CircuitBreaker has no changeConfig.
//   - RemainingWaitInOpenState tells how long an OPEN breaker keeps refusing, so that a caller
//     can wait for it (as stream.PauseWhileOpen does) rather than poll it; Resilience4j has
//     no counterpart.
//   - A panic in the guarded call is recorded as a failure (even when RecordErrors does not
//     list it; only the ignore lists can exempt it) and comes back as a *levee.PanicError.
//     Resilience4j lets a Java Error through unrecorded and leaks the HALF_OPEN permit.
//   - A call ended by its caller's own cancellation is not recorded and releases its permit.
//   - A rejection by another levee pattern (levee.IsRejection: an inner bulkhead, rate
//     limiter or breaker) never reaches RecordErrors, IgnoreErrors or the predicates: it is
//     ignored unless RecordRejections matches it. Resilience4j's behaviour is one line away:
//     RecordRejections: []error{bulkhead.ErrBulkheadFull}.
//   - A permit reports only to the period that granted it. Its release goes back to that
//     period: a call admitted in CLOSED or in an earlier HALF_OPEN period cannot enlarge a
//     later period's probe budget, and a HALF_OPEN probe completed twice is counted once.
//     Its outcome (success, failure, slow call, ignored error, result recorded as failure)
//     counts only if that period is still current when it is reported, as gobreaker's
//     generations: a late one is published (SUCCESS, ERROR or IGNORED_ERROR with Event.Late
//     set) but recorded in no window, shown to no TransitionOnResult, and moves nothing. So a
//     slow call admitted in CLOSED cannot decide a HALF_OPEN trial in place of its probes,
//     the probe that closes the breaker cannot open the new CLOSED period through
//     TransitionOnResult, and OPEN's metrics stay those of the window that opened it.
//     Resilience4j records a late outcome in whatever state is current (and releases into it).
//   - TransitionOnResult is also consulted for results RecordResultPredicate records as
//     failures and for nil results, so a 503 that is both a failure and carries Retry-After
//     opens the breaker until then.
//   - Time is monotonic: the OPEN deadline and the time-based window's buckets are durations
//     since New, not wall-clock instants, so a step of the wall clock changes nothing. The
//     buckets are aligned to the instant New ran rather than to wall-clock seconds. Durations
//     keep nanosecond resolution.
//   - The state is an atomic pointer and transitions are compare-and-swap from the exact
//     period they leave, so timers that fire late and concurrent outcomes never cause a second
//     or a stale transition. A refusal on the lazy OPEN→HALF_OPEN path publishes one
//     NOT_PERMITTED event (Resilience4j publishes two).
//   - New refuses MaxWaitDurationInHalfOpenState below 1ms (other than 0), which Resilience4j
//     silently reads as "wait forever", and windows larger than MaxSlidingWindowSize.
//   - Event consumers run outside every lock and may call back into the breaker.
//   - Events and EventSeq deliver an INITIAL_STATE event (EventInitialState) first, with the
//     state at subscription; Resilience4j has no such event.
package circuitbreaker
