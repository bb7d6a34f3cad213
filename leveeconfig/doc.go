// Package leveeconfig loads levee's patterns from a Spring Boot application.yml (its JSON
// form, or an application.properties) written with Resilience4j's keys, so that a service ported from Spring keeps its file
// and its per-environment overrides:
//
//	resilience4j:
//	  circuitbreaker:
//	    configs:
//	      default:
//	        slidingWindowSize: 10
//	    instances:
//	      payment:
//	        minimumNumberOfCalls: 5
//	        waitDurationInOpenState: 3s
//	        ignoreExceptions:
//	          - demo.r4j.InvalidOrderException
//
//	cfg, err := leveeconfig.Load("application.yml", leveeconfig.Options{
//		Errors: map[string]error{"demo.r4j.InvalidOrderException": ErrInvalidOrder},
//	})
//	reg, err := cfg.Registry()                              // every instance of the file, by name
//	pay, err := leveeconfig.Pipeline(cfg, reg, "payment", fb) // in the file's aspect order
//
// # Keys
//
// The sections are resilience4j.circuitbreaker, retry, bulkhead, thread-pool-bulkhead
// (async.WorkerPool), ratelimiter and timelimiter, each with configs.NAME (configs.default is
// the default of every instance), instances.NAME, baseConfig (an entry inherits every key it
// does not set from the config it names, itself maybe inheriting; an instance without one
// inherits configs.default), tags, the aspect-order key of the pattern, and metrics (see Keys
// levee cannot honour, as resilience4j.scheduled.executor). Keys are
// Resilience4j 2's Spring keys, read with Spring's relaxed binding (slidingWindowSize and
// sliding-window-size are one key); every other key under resilience4j is an error (and under levee,
// whose sections are levee's own patterns: see below), keys outside them (spring.application.name,
// server.port, management.endpoints.web.exposure.include, ...) are Spring's, left alone
// without a word, but for Spring's profile keys. Dotted keys are the nested keys they spell, at any level, and merge
// with them: "resilience4j.circuitbreaker:" as one key, or
// "resilience4j.circuitbreaker.instances.payment.slidingWindowSize: 5" (a name holding dots is
// written in brackets, "instances.[pay.v2]", as in Spring); a key given twice, in any of its
// forms, is an error naming both lines. A file with no resilience4j key loads with a Warning
// naming the file.
//
// Keys and names follow two rules, Spring's. A key (slidingWindowSize) is a property, which
// Spring's relaxed binding matches whatever its case, dashes and underscores ("context-path
// binds to contextPath", "PORT binds to port", in Spring Boot's reference). An instance or
// config name is a map key, which Spring keeps as written but for the characters it drops:
// "If the key is not surrounded by [], any characters that are not alpha-numeric, - or . are
// removed" (Spring Boot's reference, Binding Maps). So payment and pay_ment are one instance,
// their blocks merged key by key (a key both set differently is an error naming both lines),
// while payment, Payment and pay-ment are three instances to Spring, which levee, folding names
// as keys, refuses naming both lines rather than merge. The same key twice in one YAML mapping
// (payment: twice) is refused with both lines, as Spring's YAML loader refuses it, unless the
// two blocks are the same after binding: then it is read once, with a Warning.
//
// # Profiles
//
// The active profiles are worked out as Spring Boot does: spring.profiles.active is taken
// from the highest source that sets it, Options.Profiles, else SPRING_PROFILES_ACTIVE of
// Options.Environ, else the file (its last document that sets it); spring.profiles.include
// (and SPRING_PROFILES_INCLUDE) adds profiles whatever the source, before the active ones;
// with neither, spring.profiles.default (SPRING_PROFILES_DEFAULT, else the file's) or
// "default" is active; spring.profiles.group.NAME brings its profiles in right after NAME.
// The lists are comma-separated, YAML lists or indexed (spring.profiles.include[0]). As in
// Spring, "The spring.profiles.active and spring.profiles.default properties can only be used
// in non-profile-specific documents. This means they cannot be included in profile specific
// files or documents activated by spring.config.activate.on-profile" (Spring Boot's
// reference, Profiles), nor can include or group: each is refused there, naming the file and
// line, as is Spring Boot 2.3's spring.profiles document key.
//
// A file may hold several documents (YAML's ---, a .properties file's #---); one with
// spring.config.activate.on-profile applies only when one of the profile expressions it
// lists accepts the active profiles: a name, !name, names joined by & or by |, parentheses to
// mix them ("prod & !eu", "(prod | staging) & eu"), as Spring's Profiles.of; a malformed
// expression (a & b | c) is an error. Load then reads, for each active profile, the
// profile-specific files beside the main file: application-{profile}.yaml, .yml and
// .properties, in that order, .properties winning ("If you have configuration files with both
// .properties and YAML format in the same location, .properties takes precedence", Spring
// Boot's reference); Load of a directory reads its application.yaml, .yml and .properties the
// same way. The order is Spring's: the main files' documents in order, then each profile's
// files in the order of the profiles (the last wins), then the RESILIENCE4J_* variables; a
// later source's key replaces an earlier one's, and an instance declared in several is one
// instance with the keys of all. A profile document inside a profile-specific file is
// refused.
//
// A .properties file is read as Spring's: key=value, key: value or key value, # and !
// comments, backslash continuations and Java's escapes; every value is a string, a list
// comma-separated or indexed (retryExceptions[0]=...); a key given twice keeps its last value
// with a Warning.
//
// Values: durations as Go writes them ("100ms", "1m30s"), as Spring's simple form with its
// unit in any case ("3s", "3S", "1M" for a minute, "500MS", "2d", a bare integer of
// milliseconds) or in ISO-8601 in any case ("PT3S", "pt3s"); enums in Resilience4j's names
// (COUNT_BASED); lists as YAML lists, comma-separated, or by index as Spring's indexed form
// (retryExceptions[0]: ..., retryExceptions[1]: ...), whose indexes must run from 0 without a
// gap; an error in an entry names the entry's line and index. An empty value ("") is an error
// saying so. Every error speaks the file's words: the key as Resilience4j spells it, never a
// Go field (a check the Go pattern's New makes, such as coreThreadPoolSize above
// maxThreadPoolSize, is reported at the key's own line, each other key it names followed by
// where it was set or "default"). Exception class names map to Go errors through Options.Errors; Resilience4j's own
// exceptions are known (a
// CallNotPermittedException in retryExceptions becomes retry.Config.RetryRejections, in a
// breaker's recordExceptions RecordRejections; in ignoreExceptions it asks for what levee does
// anyway: rejections are neither retried nor recorded unless listed). Java's catch-all classes,
// java.lang.Exception, java.lang.RuntimeException and java.lang.Throwable, need no entry
// either: they stand for every error (levee.ErrorType[error](), which errors.As matches with
// any error), except levee's own rejections, which no list sees but the one named for them:
// "retryExceptions: [java.lang.Exception]" retries every failure of the call, not an open
// breaker's CallNotPermittedException, and "ignoreExceptions: [java.lang.Exception]" in a
// breaker ignores every error, while a rejection stays unrecorded unless recordExceptions lists
// it. Class names are read fully qualified only. The JDK's common I/O exceptions need no entry
// either (Options.Errors overrides them):
//
//	java.net.ConnectException             syscall.ECONNREFUSED (a refused dial's *net.OpError)
//	java.net.SocketTimeoutException       os.ErrDeadlineExceeded, context.DeadlineExceeded
//	java.util.concurrent.TimeoutException timelimiter.ErrTimeout, os.ErrDeadlineExceeded,
//	                                      context.DeadlineExceeded
//	java.net.UnknownHostException         *net.DNSError (errors.As)
//	java.io.IOException                   every net.Error (errors.As), io.ErrUnexpectedEOF
//
// Any other class is an error listing the ways to map it, unless the entry sets
// ignoreClassBindingExceptions: true, which skips it with a Warning, as Resilience4j's
// converter skips a class it cannot load.
//
// # levee's own sections
//
// The patterns Resilience4j has no counterpart of are configured under the top-level key
// levee, in the same style: levee.<section>.configs.NAME (configs.default the default of
// every instance), instances.NAME, baseConfig, Spring's relaxed binding, dotted and indexed
// keys, profiles, and LEVEE_<SECTION>_INSTANCES_<NAME>_<KEY> variables (a LEVEE_ variable
// naming no section is someone else's and left alone). Inheritance is that of Resilience4j's
// registries other than the breaker's: configs.default beneath a baseConfig chain.
//
//	levee:
//	  adaptive:
//	    instances:
//	      checkout:
//	        limitAlgorithm: GRADIENT2
//	        maxLimit: 200
//	        maxQueued: 100
//	        prioritizer: shared
//	  prioritizer:
//	    instances:
//	      shared: {queueStart: 1, queueFull: 2}
//	  throttle:
//	    instances:
//	      backend: {k: 2, window: 2m, recordExceptions: [demo.r4j.OverloadedException]}
//
//	o, err := cfg.NewOverload() // o.Limiters["checkout"], o.Prioritizers["shared"], o.Throttlers["backend"]
//
// The keys, each a field of the Go config (the range is New's; a 0 that Go reads as the
// default is refused unless the table gives its meaning):
//
//	levee.adaptive (adaptive.Config)       default  range, meaning
//	  limitAlgorithm                       VEGAS    VEGAS, AIMD, GRADIENT2 (Algorithm)
//	  initialLimit, minLimit, maxLimit     20, 1, 1000  [1, 1048576], minLimit <= initialLimit <= maxLimit
//	  maxQueued                            0        >= 0; 0 queues nobody
//	  maxWaitDuration                      1s       > 0
//	  alpha, beta                          1, 2     Vegas: (0, 1e6], beta > alpha
//	  probeInterval                        60s      Vegas's re-measurement; 0 never probes (NoProbe)
//	  probeLimit, probeSamples             3, 50    [minLimit, maxLimit], [1, 1e6]
//	  backoffRatio, timeout                0.9, 5s  AIMD: [0.5, 1), > 0
//	  tolerance, smoothing                 1.5, 0.2 Gradient2: [1, 1e6], (0, 1]
//	  queueSize, longWindow                4, 600   Gradient2: [0, 1048576] (0: NoQueueSize), [1, 1e6]
//	  latencyCeiling                       0        >= 0; 0 is no ceiling
//	  prioritizer                          (none)   an instance of levee.prioritizer, which
//	                                                NewOverload registers the limiter with
//	  partitions                           (none)   NAME: {share, rejectionDelay}, Netflix's shares
//	                                                of the limit: each share in (0, 1], summing
//	                                                to at most 1 (adaptive.NewPartitioned)
//	  maxKeys                              (none)   [1, 1048576]: one share per key, for tenants
//	                                                (adaptive.NewKeyed); not with partitions
//	  rejectionDelay                       0        >= 0: the keyed limiter's, and the default
//	                                                of each partition without its own
//	  maxDelayedCalls                      100      >= 0 (0: the default); with partitions or maxKeys
//	levee.prioritizer (adaptive.PrioritizerConfig)
//	  queueStart, queueFull                1, 2     [0, 1e6], queueFull > queueStart (0 is
//	                                                adaptive.NoQueueStart)
//	  calibrationInterval                  1s       > 0
//	levee.throttle (throttle.Config)
//	  k                                    2        [1, 1e6] (K)
//	  window, windowBuckets                2m, 20   > 0, [1, 1000], window >= windowBuckets ns
//	  recordExceptions                     (every error)  exception classes, as a breaker's;
//	                                                a levee rejection is refused
//	  ignoreClassBindingExceptions         false    as in Resilience4j's sections
//
// An instance with partitions or maxKeys queues nobody (maxQueued must stay 0) and has no
// prioritizer; its partitions come whole from one source, as a list does, in the file's order.
// Config.NewOverload builds them (a registry holds Resilience4j's patterns only); Pipeline
// leaves them out: add a limiter with levee.Pipeline's WithConcurrencyLimiter (or a
// prioritizer's Prioritizer.Limiter(l)) and a throttler with WithAdmission. Reload reports
// their changes as Unchanged: build them again. The priority of a call is not a key: it comes
// with the call's context (priority.WithPriority, or a header the HTTP and gRPC middleware
// read).
//
// # Explicit values mean what they say
//
// In a levee Config the zero value of a field means Resilience4j's default; in a file, a key
// that is present means its value, and an absent key the default. Where the two differ:
//
//   - retry waitDuration: 0 is no wait (retry.NoWait), not 500ms;
//   - ratelimiter timeoutDuration: 0 is no wait (ratelimiter.NoWait), not 5s;
//   - bulkhead maxConcurrentCalls: 0 admits no call (bulkhead.NoConcurrentCalls), not 25;
//   - thread-pool-bulkhead queueCapacity: 0 is no queue (async.NoQueue), not 100, and
//     keepAliveDuration: 0 ends idle extra workers at once (async.NoKeepAlive), not 20ms;
//   - keys whose 0 Resilience4j refuses are refused, not read as the default:
//     failureRateThreshold, slowCallRateThreshold, slowCallDurationThreshold,
//     slidingWindowSize, minimumNumberOfCalls, waitDurationInOpenState,
//     permittedNumberOfCallsInHalfOpenState, maxAttempts, limitForPeriod,
//     limitRefreshPeriod, coreThreadPoolSize, maxThreadPoolSize, and the time limiter's
//     timeoutDuration (levee cannot time out before the call starts).
//
// bulkhead maxWaitDuration: 0 and a breaker's maxWaitDurationInHalfOpenState: 0 mean the same
// in both: no wait, and no limit.
//
// # Keys levee cannot honour
//
// registerHealthIndicator and allowHealthIndicatorToFail of a breaker, and
// eventConsumerBufferSize of every pattern, configure leveestatus: Config.StatusOptions
// returns the options to pass to leveestatus.NewHandler. Keys that configure Spring or Java
// machinery with no effect on a call's outcome are accepted with a Warning and ignored, their
// values checked as Spring binds them (a boolean, an integer), so a file Spring refuses is
// refused:
//
//	key                              under                                     level
//	writableStackTraceEnabled        an entry of circuitbreaker, bulkhead,     note
//	                                 thread-pool-bulkhead or ratelimiter
//	subscribeForEvents               an entry of ratelimiter                   note
//	registerHealthIndicator,         an entry of ratelimiter (leveestatus'     note
//	  allowHealthIndicatorToFail       health lists breakers only)
//	contextPropagators               an entry of thread-pool-bulkhead,         note
//	                                 resilience4j.scheduled.executor
//	corePoolSize (at least 1)        resilience4j.scheduled.executor           note
//	metrics.enabled                  each of the six sections, as              note; false a
//	                                 resilience4j.retry.metrics.enabled        likely mistake
//	metrics.legacy.enabled           each of the six sections                  note
//
// metrics.enabled: false is a LikelyMistake because levee does not turn metrics off: it
// publishes them only through a collector the application registers (leveeprom.NewCollector,
// leveeotel.New), so to publish none, register none.
// Keys that name Java code (recordFailurePredicate,
// ignoreExceptionPredicate, recordResultPredicate, retryExceptionPredicate, resultPredicate,
// intervalBiFunction, consumeResultBeforeRetryAttempt, drainPermissionsOnResult) change what
// a call does, so they are refused: set the Go function with registry.InstanceConfig.Tune.
//
// # Aspect order
//
// retryAspectOrder, circuitBreakerAspectOrder, rateLimiterAspectOrder, timeLimiterAspectOrder
// and bulkheadAspectOrder order Pipeline's layers as Spring's Ordered: the lower value is the
// outer layer. Their defaults are Spring's (Integer.MAX_VALUE-4 for Retry to
// Integer.MAX_VALUE for Bulkhead), so Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead))))
// as levee.DefaultPipeline. Two equal orders are refused, naming both keys: Spring orders
// them arbitrarily. Setting some of them only is accepted, with a Warning naming each key left
// at its default, its value and the resulting order, since the numbers are absolute.
//
// # Warnings
//
// Config.Warnings have a Level: a Note, or a LikelyMistake. Besides the ignored keys, a load
// warns of the defaults that bite (the README's table), met when an instance sets one key of
// a pair and not its partner:
//
//	set                                  not set                    level           because
//	limitForPeriod                       limitRefreshPeriod         likely mistake  500ns cycles
//	limitForPeriod                       timeoutDuration            note            a 5s wait
//	maxAttempts above 1                  waitDuration               note            500ms apart
//	slidingWindowType: TIME_BASED        minimumNumberOfCalls       likely mistake  100 calls first
//	slidingWindowSize below 100          minimumNumberOfCalls       note            the window's size
//	minimumNumberOfCalls above a         (a larger window)          likely mistake  capped to the window
//	  count-based slidingWindowSize
//	slowCallRateThreshold                slowCallDurationThreshold  likely mistake  only 60s calls are slow
//	slowCallDurationThreshold            slowCallRateThreshold      note            100%: every call slow
//	a time limiter instance              timeoutDuration            note            1s
//	maxConcurrentCalls                   maxWaitDuration            note            refused at once
//	exponentialBackoffMultiplier,        enableExponentialBackoff   likely mistake  ignored
//	  exponentialMaxWaitDuration...
//	randomizedWaitFactor                 enableRandomizedWait       likely mistake  ignored
//
// Each is reported at the key that is set (the instance for the time limiter), after
// inheritance: a key a base config sets counts as set.
//
// # Environment
//
// RESILIENCE4J_* variables override the file, as Spring Boot's environment does:
// RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENT_SLIDINGWINDOWSIZE=20 sets
// resilience4j.circuitbreaker.instances.payment.slidingWindowSize, and
// RESILIENCE4J_RETRY_INSTANCES_PAYMENT_RETRYEXCEPTIONS_0 (the index between underscores,
// Spring's rule) retryExceptions[0]; a list from the environment replaces the file's whole, as
// in Spring. An instance the environment alone declares is created like the file's. Their
// values are read and reported as a file's, an error naming the variable. A variable's
// underscores are dots, Spring's rule (a dot becomes an underscore, dashes are removed, upper
// case), so a key is written in one word: RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENT_SLIDING_WINDOW_SIZE
// is refused, naming slidingWindowSize and ..._PAYMENT_SLIDINGWINDOWSIZE. (Spring Boot's legacy
// mapping of a dashed property, sliding-window-size, also binds SLIDING_WINDOW_SIZE; levee,
// whose instance names may hold underscores, does not guess where the name ends.)
// RESILIENCE4J_<SECTION>_METRICS_ENABLED, _METRICS_LEGACY_ENABLED and
// RESILIENCE4J_SCHEDULED_EXECUTOR_COREPOOLSIZE are ignored with a Warning, as in a file.
//
// # Reload
//
// Config.Reload applies a newly loaded file to the running instances: a rate limiter's limit
// and timeout and a bulkhead's size and wait change in place, as Resilience4j changes them; a
// circuit breaker's config from its next state transition, and a retry's and a time limiter's
// for the calls that start after the reload (levee's additions: Resilience4j cannot change
// them). The rest (a rate limiter's cycle, a worker pool's sizes) is reported.
package leveeconfig
