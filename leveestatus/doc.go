// Package leveestatus serves the state of a registry.Registry's instances over HTTP: a JSON
// status API in the shapes of Resilience4j's Spring Boot actuator endpoints, a health check,
// and a live dashboard page.
//
//	h, err := leveestatus.NewHandler(reg)
//	...
//	defer h.Close()
//	mux.Handle("/levee/", http.StripPrefix("/levee", h))
//
// The Handler is an http.Handler on its own http.ServeMux; nothing is registered on
// http.DefaultServeMux. Every answer but the dashboard and the stream is application/json.
//
// # Endpoints
//
//	GET  /                                        the dashboard (HTML, no external assets)
//	GET  /stream                                  server-sent events feeding the dashboard
//	GET  /health                                  {"status","components":{name:{"status","details"}}}
//	GET  /circuitbreakers                         {"circuitBreakers":{name:details}}
//	GET  /circuitbreakers/{name}                  details
//	POST /circuitbreakers/{name}                  {"updateState":"CLOSE"|"FORCE_OPEN"|"DISABLE"|"METRICS_ONLY"|"RESET"}
//	GET  /circuitbreakerevents[/{name}[/{eventType}]]  {"circuitBreakerEvents":[...]}
//	GET  /retries                                 {"retries":["payment"]}
//	GET  /bulkheads                               {"bulkheads":["db","jobs"]}  (semaphore and thread-pool)
//	GET  /ratelimiters, /timelimiters             {"rateLimiters":[...]}, {"timeLimiters":[...]}
//	GET  /details/retries, /details/bulkheads, /details/ratelimiters, /details/timelimiters
//	GET  /retryevents[/{name}[/{eventType}]], /bulkheadevents..., /ratelimiterevents...,
//	     /timelimiterevents...
//	GET  /details/adaptivelimiters[/{name}]       {"adaptiveLimiters":{name:details}}, or one's details
//	GET  /details/partitionedlimiters[/{name}]    {"partitionedLimiters":{...}}
//	GET  /details/prioritizers[/{name}]           {"prioritizers":{...}}
//	GET  /details/throttlers[/{name}]             {"throttlers":{...}}
//	GET  /details/keyed[/{name}]                  {"keyed":{...}}
//	GET  /details/sharedratelimiters[/{name}]     {"sharedRateLimiters":{...}}
//	GET  /details/sharedcircuitbreakers[/{name}]  {"sharedCircuitBreakers":{...}}
//	GET  /details/adaptivelimiterevents[/{name}[/{eventType}]]  {"adaptiveLimiterEvents":[...]}
//
// A breaker's details carry the fields of Resilience4j's CircuitBreakerDetails —
// failureRate, failureRateThreshold, slowCallRate, slowCallRateThreshold, bufferedCalls,
// failedCalls, slowCalls, slowFailedCalls, notPermittedCalls, state — with rates as JSON
// numbers in percent (62.5, or -1 while the window holds fewer calls than its minimum) where
// Resilience4j writes strings ("62.5%"), and states in Resilience4j's upper-case names. The
// other patterns' details use the names of their Resilience4j metrics; durations are numbers
// of milliseconds in fields ending in InMs. As Resilience4j's endpoints, /retries, /bulkheads,
// /ratelimiters and /timelimiters list the names only, sorted (a worker pool among the
// bulkheads, as Resilience4j's thread-pool bulkheads); levee gives each its details under
// /details/ with the same key, async.WorkerPools under "threadPoolBulkheads" of
// /details/bulkheads. Worker pools' events are listed with the bulkheads'.
//
// The patterns Resilience4j has no endpoint for are levee's own, under /details/ only:
// adaptive limiters (algorithm, limit, limitEstimate, minLimit, maxLimit, inFlightCalls,
// queuedCalls, maxQueuedCalls, permittedCalls, rejectedCalls, droppedCalls,
// noLoadLatencyInMs, latencyCeilingInMs, maxWaitDurationInMs, and the algorithm's inputs:
// probing for Vegas, shortRttInMs and longRttInMs for Gradient2); partitioned limiters (limit,
// inFlightCalls, delayedCalls and partitions, each with name, share, limit, inFlightCalls,
// delayedCalls, permittedCalls, rejectedCalls, the implicit partition last and named ""; a
// limiter of adaptive.NewKeyed has keyed: keys, maxKeys, keyLimit, maxKeysRejectedCalls,
// shareRejectedCalls instead of partitions); prioritizers (rejectionRate, rejectionThreshold
// as priority.Format writes it and rejectionThresholdLevel, and priorities from critical down,
// each with admittedCalls, shedCalls, rejectedCalls, queuedCalls); throttlers (k, windowInMs,
// requests and accepts within the window, rejectionProbability, permittedCalls,
// throttledCalls); keyed families (numberOfKeys, maxKeys, idleTimeoutInMs, hits, misses,
// created, createErrors, evictedCapacity, evictedIdle, removed, refusedProtected, and for
// breakers circuitBreakerStates with every state; instances, each key's state or limit and
// inFlightCalls, only for a family made with registry.KeyedFamilyConfig.PerKeySeries, so that
// an evicted key leaves the answer with it); shared rate limiters (availablePermissions,
// numberOfWaitingThreads, limitForPeriod, fallbackLimitForPeriod, nanosToWait, decisions by
// kind, storeFailures, breakerRejections, fallbackEpisodes, degraded, replicas, replica); and
// shared circuit breakers (state, version and origin of the shared record, replica,
// published, adopted, conflicts, storeErrors, localDecisions, trialRefusals, storeAvailable).
// Counters count since the instance was created. An adaptive limiter's events (CALL_PERMITTED,
// CALL_REJECTED, LIMIT_CHANGED) are kept as the other patterns' and listed under
// /details/adaptivelimiterevents as {adaptiveLimiterName, type, creationTime}, and limit, the
// new limit, for LIMIT_CHANGED.
//
// Events have the fields of Resilience4j's event DTOs (circuitBreakerName, type,
// creationTime, errorMessage, durationInMs, stateTransition; retryName, numberOfAttempts;
// bulkheadName; rateLimiterName; timeLimiterName), creationTime in RFC 3339 (UTC), sorted by
// creation time. The handler keeps the last EventConsumerBufferSize events of each event type
// of each instance (100 by default; InstanceEventConsumerBufferSize for one instance, as its
// eventConsumerBufferSize), from its subscription on, so that a storm of one type (NOT_PERMITTED
// while a breaker is OPEN) cannot push out the last events of another (the ERRORs that opened
// it): /{path}/{name}/{eventType} has up to the buffer size of that type, and the list of all
// types an instance's last buffer-size events, which are Resilience4j's single ring's. It
// subscribes to every instance when created, to the instances the registry adds later, and
// unsubscribes from those it removes. The event type in a path is matched whatever its case.
//
// An unknown name is answered 404, and an unknown event type 400 as Spring answers a path
// variable it cannot convert, each with a JSON body {"status", "error", "message", "path"}; a
// method a path does not serve, 405 (by the mux, with an Allow header).
//
// # Refused calls
//
// notPermittedCalls is Resilience4j's actuator's: circuitbreaker.Metrics.NumberOfNotPermittedCalls,
// the count of the current state, which every transition but one into OPEN starts again and
// which counts FORCED_OPEN's refusals. leveeprom's resilience4j_circuitbreaker_not_permitted_calls_total
// is Micrometer's: cumulative NOT_PERMITTED events, without FORCED_OPEN's (no event is
// published there). After 3 refusals in OPEN and a transition to HALF_OPEN, notPermittedCalls
// is 0 and the counter 3.
//
// # Health
//
// GET /health reports every breaker (with RegisterHealthIndicators, only those registered, as
// Resilience4j's registerHealthIndicator) as Resilience4j's CircuitBreakersHealthIndicator: CLOSED
// is UP, OPEN is CIRCUIT_OPEN, HALF_OPEN is CIRCUIT_HALF_OPEN, the other states UNKNOWN. The
// overall status is UP, with 200, even while breakers are open: an open breaker protects the
// service from one dependency's outage, and a health check failing for it would take every
// instance out of the load balancer at once. Only a breaker named in
// AllowHealthIndicatorToFail reports DOWN when OPEN, which makes the overall status DOWN and
// the answer 503. It is a diagnostic endpoint: do not use it as a liveness probe.
//
// The body differs from Spring Boot's /actuator/health in one level: Spring nests the breakers
// under the indicator's component, components.circuitBreakers.details.{name}.status, while
// levee, which has no other health indicators, puts each breaker at components.{name}.status,
// its details being those of GET /circuitbreakers (the figures as numbers, where
// Resilience4j's indicator writes strings such as "-1.0%"). A script that reads Spring's path
// reads components.{name} here instead.
//
// # State updates
//
// POST /circuitbreakers/{name} moves a breaker as Resilience4j's endpoint does (CLOSE,
// FORCE_OPEN, DISABLE; levee adds METRICS_ONLY and RESET) and answers {circuitBreakerName,
// currentState, message} with Resilience4j's message, "payment state has been changed
// successfully". It is refused with 403 unless EnableStateUpdates is given: the
// handler authenticates no one, so mount it behind the application's authentication and off
// the public port before enabling it. A body that is not such an object is answered 400.
//
// # Dashboard
//
// GET / is one HTML page, styles and script inline, usable on a phone, that shows every
// instance: breakers colored by state (CLOSED green, OPEN red, HALF_OPEN amber, FORCED_OPEN
// crimson, DISABLED grey, METRICS_ONLY blue) with their failure and slow-call rates against
// their thresholds and their last transitions, and each instance's calls per second and
// figures, levee's own patterns (adaptive and partitioned limiters, prioritizers, throttlers,
// keyed families, shared limiters and breakers) among them with their /details/ figures. It follows GET /stream, a text/event-stream that sends a "snapshot" event at once
// and every SnapshotInterval (1s by default), and a "transition" event followed by a fresh
// snapshot as soon as a breaker changes state. The page finds the stream by a relative
// address: mount the handler under a prefix ending with a slash.
//
// # Cost and lifetime
//
// While a Handler exists every call through a watched instance runs one more event callback,
// which appends to a ring under a short mutex. Close removes every subscription and ends
// the streams; a closed Handler answers 503.
package leveestatus
