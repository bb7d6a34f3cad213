// Package leveeconfig loads levee's patterns from a Spring Boot application.yml (or its JSON
// form) written with Resilience4j's keys, so that a service ported from Spring keeps its file
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
// inherits configs.default), tags, and the aspect-order key of the pattern. Keys are
// Resilience4j 2's Spring keys, read with Spring's relaxed binding (slidingWindowSize and
// sliding-window-size are one key); every other key under resilience4j is an error, keys
// outside it are not read. Dotted keys are the nested keys they spell, at any level, and merge
// with them: "resilience4j.circuitbreaker:" as one key, or
// "resilience4j.circuitbreaker.instances.payment.slidingWindowSize: 5" (a name holding dots is
// written in brackets, "instances.[pay.v2]", as in Spring); a key given twice, in any of its
// forms, is an error naming both lines. A file with no resilience4j key loads with a Warning
// naming the file. One YAML document per file: Spring profiles are not read.
//
// Values: durations as Go writes them ("100ms", "1m30s"), as Spring does ("3s", "2d", a bare
// integer of milliseconds) or in ISO-8601 ("PT3S"); enums in Resilience4j's names
// (COUNT_BASED); lists as YAML lists or comma-separated. Exception class names map to Go
// errors through Options.Errors; Resilience4j's own exceptions are known (a
// CallNotPermittedException in retryExceptions becomes retry.Config.RetryRejections, in a
// breaker's recordExceptions RecordRejections; in ignoreExceptions it asks for what levee does
// anyway: rejections are neither retried nor recorded unless listed). Java's catch-all classes,
// java.lang.Exception, java.lang.RuntimeException and java.lang.Throwable, need no entry
// either: they stand for every error (levee.ErrorType[error](), which errors.As matches with
// any error), except levee's own rejections, which no list sees but the one named for them:
// "retryExceptions: [java.lang.Exception]" retries every failure of the call, not an open
// breaker's CallNotPermittedException, and "ignoreExceptions: [java.lang.Exception]" in a
// breaker ignores every error, while a rejection stays unrecorded unless recordExceptions lists
// it. Class names are read fully qualified only.
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
// Keys that configure Spring or Java machinery with no effect on a call's outcome are accepted
// with a Warning and ignored: registerHealthIndicator, allowHealthIndicatorToFail,
// eventConsumerBufferSize, writableStackTraceEnabled, subscribeForEvents and
// contextPropagators. Keys that name Java code (recordFailurePredicate,
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
// as levee.DefaultPipeline. Setting some of them only is accepted, with a Warning naming the
// resulting order, since the numbers are absolute.
//
// # Environment
//
// RESILIENCE4J_* variables override the file, as Spring Boot's environment does:
// RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENT_SLIDINGWINDOWSIZE=20 sets
// resilience4j.circuitbreaker.instances.payment.slidingWindowSize. Their values are read and
// reported as a file's, an error naming the variable.
//
// # Reload
//
// Config.Reload applies a newly loaded file to the running instances: a rate limiter's limit
// and timeout and a bulkhead's size and wait change in place, as Resilience4j changes them; a
// circuit breaker's config from its next state transition, and a retry's and a time limiter's
// for the calls that start after the reload (levee's additions: Resilience4j cannot change
// them). The rest (a rate limiter's cycle, a worker pool's sizes) is reported.
package leveeconfig
