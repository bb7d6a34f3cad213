// Package leveeotel publishes the metrics of the instances in a levee registry as
// OpenTelemetry instruments, and writes what happens to each call on its trace span (see
// Traces). The metrics are published under the names and attributes of Resilience4j's Micrometer
// module, so that the dashboards and alerts written for Resilience4j work unchanged.
//
//	reg := registry.New()
//	_ = reg.AddCircuitBreaker(cb)
//	m, err := leveeotel.New(reg, leveeotel.WithMeterProvider(provider))
//	if err != nil { ... }
//	defer m.Close()
//
// Without WithMeterProvider the global provider (otel.GetMeterProvider) is used, which is a
// no-op until the application installs an SDK. The meter's instrumentation scope is ScopeName
// with version Version(). Only the OpenTelemetry API is needed by Metrics: the SDK and the
// exporters are the application's choice (CallsProducer implements an interface of the SDK's,
// whose data types it imports).
//
// # Instruments
//
// Every data point carries the attribute name (the instance's name) and the instance's tags
// (registry.Registry.SetTags); kind and state are added where the table says. A tag whose key
// is name, kind or state is left out: the attribute set by this package wins.
//
//	instrument                                          instrument kind         unit          attributes, value
//	resilience4j.circuitbreaker.state                   Int64ObservableGauge                  state: closed, open, half_open, disabled, forced_open, metrics_only; 1 for the current state, 0 for the others
//	resilience4j.circuitbreaker.calls                   Float64Histogram        s             kind: successful, failed, ignored; the call's duration
//	resilience4j.circuitbreaker.not.permitted.calls     Int64ObservableCounter  {call}        kind: not_permitted
//	resilience4j.circuitbreaker.buffered.calls          Int64ObservableGauge    {call}        kind: successful, failed
//	resilience4j.circuitbreaker.slow.calls              Int64ObservableGauge    {call}        kind: successful, failed
//	resilience4j.circuitbreaker.failure.rate            Float64ObservableGauge                percent; -1 below the minimum number of calls
//	resilience4j.circuitbreaker.slow.call.rate          Float64ObservableGauge                percent; -1 likewise
//	resilience4j.retry.calls                            Int64ObservableCounter  {call}        kind: successful_without_retry, successful_with_retry, failed_without_retry, failed_with_retry
//	resilience4j.bulkhead.available.concurrent.calls    Int64ObservableGauge    {call}
//	resilience4j.bulkhead.max.allowed.concurrent.calls  Int64ObservableGauge    {call}
//	resilience4j.bulkhead.queue.depth                   Int64ObservableGauge    {task}        of an async.WorkerPool (Resilience4j's thread-pool bulkhead), as the six below
//	resilience4j.bulkhead.queue.capacity                Int64ObservableGauge    {task}
//	resilience4j.bulkhead.thread.pool.size              Int64ObservableGauge    {goroutine}   workers alive
//	resilience4j.bulkhead.max.thread.pool.size          Int64ObservableGauge    {goroutine}
//	resilience4j.bulkhead.core.thread.pool.size         Int64ObservableGauge    {goroutine}
//	resilience4j.bulkhead.active.thread.count           Int64ObservableGauge    {goroutine}   workers running a task
//	resilience4j.bulkhead.available.thread.count        Int64ObservableGauge    {goroutine}   max.thread.pool.size - active.thread.count
//	resilience4j.ratelimiter.available.permissions      Int64ObservableGauge    {permission}  negative while permissions of later cycles are reserved
//	resilience4j.ratelimiter.waiting_threads            Int64ObservableGauge    {goroutine}
//	resilience4j.timelimiter.calls                      Int64ObservableCounter  {call}        kind: successful, failed, timeout
//
// The patterns Resilience4j has none of have instruments of their own, named in the same
// style under levee. (one callback reads them all at collection time; their extra attributes
// are bounded: partition names of the config, the five priority names, and per-key
// attributes only for a registry.KeyedFamily made with PerKeySeries, whose MaxKeys is at most
// registry.MaxPerKeySeries; an evicted key's data points are gone from the next collection):
//
//	levee.adaptive.limit, .limit.estimate, .in_flight.calls, .queue.depth  gauges of an adaptive.Limiter
//	levee.adaptive.calls                                counter  {call}  kind: permitted, rejected, dropped
//	levee.adaptive.no_load_latency                      gauge    s       Vegas's no-load latency, else the lowest latency
//	levee.adaptive.short_rtt, .long_rtt                 gauges   s       of a Gradient2 limiter
//	levee.adaptive.probing                              gauge            of a Vegas limiter: 1 during a probe
//	levee.adaptive.algorithm.info                       gauge            algorithm: vegas, aimd, gradient2; 1
//	levee.adaptive.partitioned.limit, .in_flight.calls, .delayed.calls   gauges of an adaptive.PartitionedLimiter
//	levee.adaptive.partition.limit, .share, .in_flight.calls, .delayed.calls  gauges, partition (NewPartitioned)
//	levee.adaptive.partition.calls                      counter  {call}  partition; kind: permitted, rejected
//	levee.adaptive.keyed.keys, .key_limit               gauges of a NewKeyed limiter
//	levee.adaptive.keyed.rejected.calls                 counter  {call}  kind: max_keys, share
//	levee.prioritizer.calls                             counter  {call}  priority; kind: admitted, shed, rejected
//	levee.prioritizer.queued.calls                      gauge    {call}  priority
//	levee.prioritizer.rejection.rate, .rejection.threshold  gauges: fraction of levels shed (0–1), lowest level not shed
//	levee.throttle.window.requests, .window.accepts     gauges   {request}
//	levee.throttle.calls                                counter  {call}  kind: permitted, throttled
//	levee.throttle.rejection.probability                gauge            0–1
//	levee.keyed.keys, .max_keys                         gauges   {key}   of a registry.KeyedFamily
//	levee.keyed.lookups, .creations, .evictions         counters         kind: hit, miss; successful, failed; capacity, idle, removed
//	levee.keyed.refused.keys                            counter  {key}   new keys refused, every key protected
//	levee.keyed.circuitbreakers                         gauge            state; breakers of the family in it
//	levee.keyed.circuitbreaker.state                    gauge            PerKeySeries: key, state; 1 for the current state
//	levee.keyed.adaptive.limit, .adaptive.in_flight.calls  gauges        PerKeySeries: key
//	levee.ratelimiter.store.decisions                   counter          of a registry.StoreLimiter; kind: permitted, refused,
//	                                                                     store_refused, local_permitted, local_refused,
//	                                                                     fail_open_permitted, fail_closed_refused
//	levee.ratelimiter.store.errors                      counter          kind: failed, not_permitted
//	levee.ratelimiter.store.fallback.episodes           counter
//	levee.ratelimiter.store.degraded, .replicas, .limit_for_period, .fallback_limit_for_period,
//	.available_permissions, .waiting_threads            gauges
//	levee.circuitbreaker.store.record.state             gauge            of a registry.StoreBreaker; state: 1 for the record's
//	levee.circuitbreaker.store.record.version           gauge
//	levee.circuitbreaker.store.record.info              gauge            origin, replica; 1
//	levee.circuitbreaker.store.transitions              counter          kind: published, adopted, conflict
//	levee.circuitbreaker.store.errors, .local_decisions, .trial_refusals  counters
//	levee.circuitbreaker.store.available                gauge            1 while the store answers
//
// Through the Prometheus exporter they become leveeprom's levee_ series of the same names.
//
// Through OpenTelemetry's Prometheus exporter they become Micrometer's series:
// resilience4j_circuitbreaker_calls_seconds_bucket, _sum and _count (no _max),
// resilience4j_circuitbreaker_not_permitted_calls_total, resilience4j_circuitbreaker_failure_rate
// and so on. The rates have no unit, since a unit of % or 1 would make the exporter append
// _percent or _ratio; units in braces add no suffix. The exporter's options WithoutScopeInfo
// and WithoutTargetInfo drop the otel_scope_* labels and the target_info series it adds, so
// that the output is exactly the series above.
//
// # Names
//
// No OpenTelemetry semantic conventions exist for resilience patterns. The names are
// Resilience4j's, not OpenTelemetry's: the call durations are named
// resilience4j.circuitbreaker.calls rather than ending in .duration as OpenTelemetry's naming
// rules ask, waiting_threads keeps its underscore, the rates are percentages with a -1
// sentinel rather than 0–1 ratios, and the descriptions are Resilience4j's even where they name
// only the first kind of an instrument ("Total number of successful calls" for every kind of
// resilience4j.circuitbreaker.calls). These departures are deliberate, so that the exported
// series match those of Resilience4j's dashboards.
//
// # Cost
//
// Every figure but the call durations and the refusals is read at collection time from the
// snapshots the patterns keep anyway (Metrics), in one callback registered on the meter: nothing
// is added to any call's path. The call durations and the refusals of circuit breakers come
// from the breaker's events, to which a Metrics subscribes for each breaker in the registry:
// a breaker pays for them (building its events, one histogram record per call) only while a
// Metrics is attached to its registry, and allocates nothing more per call even then. A breaker
// with no subscriber does not even build its events.
//
// The per-call part can be left out. The breaker keeps the figures the histogram needs itself
// (circuitbreaker.CircuitBreaker.CallStats: counts, sums and buckets by kind), and
// NewCallsProducer exports them as the same histogram when the SDK collects, through the
// reader's sdkmetric.WithProducer; New with WithoutCallsHistogram then creates no histogram and
// subscribes only to the breakers' refusals, so a successful call costs what it costs
// unobserved (1.0x against 4.7x with the per-call histogram, in the bench module's Observers
// benchmark). The produced histogram has the default bounds only, no Min or Max, and the tags
// of each breaker at collection time (see CallsProducer). The OpenTelemetry metrics API has no
// asynchronous histogram, which is why this goes through the SDK rather than the meter.
//
// The histogram's attributes are built once per set of tags. A breaker's tags are read again
// on every call while it has none, so tags set right after AddCircuitBreaker apply from the
// first call; once it has some, at most once a second, so a later SetTags reaches the
// histogram within a second (the gauges read the tags at every collection).
//
// # Instances added and removed
//
// Metrics follows the registry: an instance added later is reported from the next collection
// on, one removed (or replaced) is no longer observed, and its breaker's events are no longer
// subscribed to. The not-permitted counter counts the refusals seen since its breaker was
// attached, so it starts again from 0 when a breaker is removed and added again (a counter
// reset, which rate() in PromQL handles). The histogram is a synchronous instrument: with
// cumulative temporality the SDK keeps exporting the last value of a removed breaker's
// histogram, unchanged, as it does for every synchronous instrument; with delta temporality it
// exports nothing more for it.
//
// # Traces
//
// Tracing writes what happens to one call on that call's own span: ContextWithTracing(ctx)
// puts it in the call's context as its levee.CallObserver, and every pattern the call runs
// through reports to it, so that the span the application started (otelhttp's, or one of its
// own around Execute) gets one span event per retry attempt (levee.attempt), per wait before
// one (levee.wait), per rejection by a breaker, bulkhead or rate limiter (levee.rejection), per
// fallback answer (levee.fallback) and per breaker transition (levee.circuitbreaker.transition):
//
//	ctx, span := tracer.Start(ctx, "GET /stock")
//	defer span.End()
//	resp, err := p.Execute(leveeotel.ContextWithTracing(ctx), call)
//
//	event                              attributes
//	levee.attempt                      levee.pattern, levee.name, levee.attempt, http.request.resend_count (after the first), error.type (when it failed)
//	levee.wait                         levee.pattern, levee.name, levee.attempt (the next), levee.wait.duration (seconds)
//	levee.rejection                    levee.pattern, levee.name, error.type
//	levee.fallback                     levee.pattern, levee.name, error.type (of the failure answered)
//	levee.circuitbreaker.transition    levee.pattern, levee.name, levee.circuitbreaker.state.from, levee.circuitbreaker.state.to
//
// http.request.resend_count and error.type are OpenTelemetry's semantic conventions (the
// resend count is written for every kind of call, not HTTP's alone; error.type is the error's
// Go type); the event names and the levee.* attributes are levee's own, since the conventions
// have none for resilience patterns. Tracing starts no span. With no tracer provider (the
// global no-op one) or a span that is not sampled, ContextWithTracing returns ctx itself:
// nothing is allocated and the call costs what it costs without tracing (BenchmarkTracing).
//
// # Differences from Resilience4j's Micrometer module
//
//   - Refusals of a FORCED_OPEN breaker are not counted in not.permitted.calls: the breaker
//     publishes no NOT_PERMITTED event in that state (as Resilience4j's event publisher), and
//     the counter is fed by the events.
//   - A call whose outcome is late (its breaker changed period while it ran, see
//     circuitbreaker.Permit) is recorded in the calls histogram, as Resilience4j records every
//     call it times, though the breaker's window does not count it.
//   - The histogram has explicit bucket boundaries in seconds (DefaultBucketBoundaries, or
//     WithBucketBoundaries); there is no decaying _max series.
package leveeotel
