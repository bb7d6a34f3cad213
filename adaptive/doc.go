// Package adaptive limits the calls to one dependency that run at the same time with a limit
// that moves by itself, as Netflix's concurrency-limits and failsafe-go's adaptivelimiter: the
// limiter measures each call's latency and raises the limit while the dependency answers as
// fast as when idle, and lowers it when calls start to queue at the dependency (their latency
// rises) or are dropped (they time out). The limit thus follows the dependency's real
// capacity, where a bulkhead's fixed MaxConcurrentCalls must be guessed and is wrong as soon
// as the dependency slows down or scales.
//
//	l, err := adaptive.New("search", adaptive.Config{})
//	...
//	hits, err := adaptive.Execute(ctx, l, index.Search)
//
// Three algorithms move the limit, each a small type behind the LimitAlgorithm interface
// (VegasLimit, AIMDLimit, Gradient2Limit, with their formulas and sources) that NewAlgorithm
// creates for code feeding samples directly. Vegas, the
// default, estimates the calls queued at the dependency as limit × (1 − noLoadLatency /
// latency) and keeps that estimate between Alpha and Beta calls: against a dependency that
// answers in 10 ms up to 8 concurrent calls and slows linearly past 8, 64 callers settle the
// limit at 9, and the dependency answers in 11.25 ms. AIMD grows the limit by one per round
// trip of the full limit (1/limit per call) and multiplies it by BackoffRatio on a drop or a
// call slower than Timeout; it needs only a clear overload signal. Gradient2 (Netflix's)
// compares recent latency with a long-term average of it. When that dependency's capacity
// halves and is restored, each of the three settles within a quarter of the capacity within
// seconds (Vegas and Gradient2 one call above it, AIMD at it or one above), p99 latency
// within 2× the unloaded one.
// The limit stays within [MinLimit, MaxLimit].
//
// A caller that finds the limit reached is refused at once with the limiter's
// *LimitExceededError, which matches ErrLimitExceeded and is a levee rejection (levee.
// IsRejection): by default a circuit breaker does not record it and Retry does not retry it.
// With MaxQueued > 0 it waits instead, first come first served, at most MaxWaitDuration or
// until its context ends.
//
// Execute runs one call under a permit and learns from its outcome; Decorator makes the
// limiter a layer of a levee.Pipeline, so that it guards calls, stream elements (packages
// stream and operators) and futures (package async) alike. Acquire returns a Permit for code
// that cannot hand over a function; each permit is ended once with OnSuccess, OnDropped,
// OnIgnore or Record. Metrics (Limit, InFlight, Queued and counts) and Subscribe
// (CALL_PERMITTED, CALL_REJECTED, LIMIT_CHANGED events) observe the limiter.
//
// # Overload: partitions and priorities
//
// NewPartitioned divides the limit into partitions (per tenant, route or class of traffic),
// each guaranteed its share and borrowing idle capacity, as Netflix's partitioned limiters;
// NewKeyed gives each key (tenant) with calls in flight an equal share, with bounded memory.
// WithPartition names a call's partition in its context. A Prioritizer, shared by several
// limiters, sheds the calls that would queue from the lowest priority level up as the queue
// grows, and never sheds priority.Critical; the call's level comes from its context (package
// priority). Both offer Execute-style helpers and Decorators for pipelines.
//
// Admitting a call, ending it and refusing one allocate nothing; a caller that queues
// allocates its place in the queue. One mutex guards the limit, the count in flight and the
// queue; it is never held across a user's call or an event consumer.
//
// # Differences from Netflix's concurrency-limits
//
//   - A measured call counts only if it started under the current limit, and Vegas averages
//     a window of limit such calls before it moves the limit. Netflix applies every sample as
//     it comes, or averages samples over a time window (WindowedLimit); levee ignores the
//     samples taken under an older limit, so the limit moves at most about once per round
//     trip and reacts to latencies it caused itself. In the scenario above this keeps the
//     limit at 9 or 10, where sample-by-sample updates overshoot to 11 now and then.
//   - Vegas's thresholds default to Alpha = 1 and Beta = 2 (times max(1, log10(limit))),
//     where Netflix uses 3 and 6: the limit settles within two calls of the concurrency at
//     which latency starts to rise, not six. Netflix's separate "no queue at all" step
//     (limit + beta) is folded into the ordinary increase.
//   - Vegas's no-load latency is re-measured every ProbeInterval by a probe at ProbeLimit, as
//     Envoy's adaptive concurrency filter does (Netflix's Vegas resets it to one ordinary sample
//     now and then); LatencyCeiling caps it, and Gradient2's long-term average, so that a long
//     incident does not become the baseline.
//   - Gradient2 averages a window of limit calls, as Vegas, and counts a drop as a window at
//     Timeout (Netflix's ignores drops). Gradient (the first version) is not offered.
//   - AIMD adds 1/limit per call, as TCP Reno's congestion avoidance, where Netflix's adds 1:
//     growing by the whole limit per round trip overshoots by half at small limits.
//   - Execute classifies the outcome itself: a deadline (including a levee
//     timelimiter.TimeoutError) is a drop; the caller's own cancellation, an inner levee
//     rejection and a panic teach nothing; any other error is an ordinary latency sample.
//   - The queue is bounded by MaxQueued and MaxWaitDuration and honours the caller's context.
package adaptive
