package leveeconfig

import (
	"slices"
	"strings"

	"github.com/levee-go/levee/registry"
)

// kind is the type of a key's value.
type kind int

const (
	kDuration kind = iota
	kInt
	kFloat
	kBool
	kEnum
	kList
	kString
	kMap // a mapping of names to mappings of keys: an adaptive limiter's partitions
)

// keySpec describes one instance key of Resilience4j's Spring configuration.
type keySpec struct {
	name string // Resilience4j's Spring key, camelCase
	kind kind
	def  string // the default's value, as Settings shows it; "" for none
	// ignored, when set, makes the key a warning: it configures Spring or Java machinery
	// that levee has no counterpart of, and says so.
	ignored string
	// refused, when set, makes the key a load error: it names Java code levee cannot run.
	refused string
}

const (
	whyHealth = "ignored: leveestatus's health lists circuit breakers only"
	whyStack  = "ignored: Go errors carry no stack trace"
	whyEvents = "ignored: levee's events are always available to subscribers"
	whyProps  = "ignored: Go passes values along in the call's context.Context"
	refuseFn  = "names a Java class, which levee cannot load; set the Go function with registry.InstanceConfig.Tune"
)

// The keys several patterns share, each written once.
var (
	// keyEventBuffer sizes what leveestatus keeps of the instance's events (Config.StatusOptions).
	keyEventBuffer = keySpec{name: "eventConsumerBufferSize", kind: kInt}
	keyStackTrace  = keySpec{name: "writableStackTraceEnabled", kind: kBool, ignored: whyStack}
	keyIgnore      = keySpec{name: "ignoreExceptions", kind: kList}
	// keyClassBinding makes an unknown exception class a warning, skipped, instead of an error.
	keyClassBinding = keySpec{name: "ignoreClassBindingExceptions", kind: kBool}
	// keyBreakerHealth are the breaker's health keys, which Config.StatusOptions turns into
	// leveestatus options; the rate limiter's are ignored, leveestatus' health having no
	// rate limiters.
	keyBreakerHealth = []keySpec{
		{name: "registerHealthIndicator", kind: kBool},
		{name: "allowHealthIndicatorToFail", kind: kBool},
	}
	keyHealth = []keySpec{
		{name: "registerHealthIndicator", kind: kBool, ignored: whyHealth},
		{name: "allowHealthIndicatorToFail", kind: kBool, ignored: whyHealth},
	}
)

// backoffKeys are the wait-interval keys of the breaker and the retry, whose maximum is
// named maxWait.
func backoffKeys(maxWait string) []keySpec {
	return []keySpec{
		{name: "enableExponentialBackoff", kind: kBool, def: "false"},
		{name: "exponentialBackoffMultiplier", kind: kFloat, def: "1.5"},
		{name: maxWait, kind: kDuration},
		{name: "enableRandomizedWait", kind: kBool, def: "false"},
		{name: "randomizedWaitFactor", kind: kFloat, def: "0.5"},
	}
}

// javaFunctions are keys naming Java code, refused.
func javaFunctions(names ...string) []keySpec {
	out := make([]keySpec, len(names))
	for i, n := range names {
		out[i] = keySpec{name: n, kind: kString, refused: refuseFn}
	}
	return out
}

// specs are the instance keys of each pattern, as Resilience4j 2's Spring Boot properties.
var specs = map[registry.Pattern][]keySpec{
	registry.CircuitBreaker: slices.Concat([]keySpec{
		{name: "failureRateThreshold", kind: kFloat, def: "50"},
		{name: "slowCallRateThreshold", kind: kFloat, def: "100"},
		{name: "slowCallDurationThreshold", kind: kDuration, def: "60s"},
		{name: "slidingWindowType", kind: kEnum, def: "COUNT_BASED"},
		{name: "slidingWindowSize", kind: kInt, def: "100"},
		{name: "minimumNumberOfCalls", kind: kInt, def: "100"},
		{name: "waitDurationInOpenState", kind: kDuration, def: "60s"},
		{name: "permittedNumberOfCallsInHalfOpenState", kind: kInt, def: "10"},
		{name: "maxWaitDurationInHalfOpenState", kind: kDuration, def: "0"},
		{name: "automaticTransitionFromOpenToHalfOpenEnabled", kind: kBool, def: "false"},
	}, backoffKeys("exponentialMaxWaitDurationInOpenState"),
		[]keySpec{{name: "recordExceptions", kind: kList}, keyIgnore, keyClassBinding},
		javaFunctions("recordFailurePredicate", "ignoreExceptionPredicate", "recordResultPredicate"),
		keyBreakerHealth, []keySpec{keyEventBuffer, keyStackTrace}),
	registry.Retry: slices.Concat([]keySpec{
		{name: "maxAttempts", kind: kInt, def: "3"},
		{name: "waitDuration", kind: kDuration, def: "500ms"},
	}, backoffKeys("exponentialMaxWaitDuration"), []keySpec{
		{name: "retryExceptions", kind: kList},
		keyIgnore,
		keyClassBinding,
		{name: "failAfterMaxAttempts", kind: kBool, def: "false"},
	}, javaFunctions("retryExceptionPredicate", "resultPredicate", "intervalBiFunction",
		"consumeResultBeforeRetryAttempt"), []keySpec{keyEventBuffer}),
	registry.Bulkhead: {
		{name: "maxConcurrentCalls", kind: kInt, def: "25"},
		{name: "maxWaitDuration", kind: kDuration, def: "0"},
		{name: "fairCallHandlingStrategyEnabled", kind: kBool, def: "true"},
		keyEventBuffer, keyStackTrace,
	},
	registry.WorkerPool: {
		{name: "coreThreadPoolSize", kind: kInt, def: "max(NumCPU-1, 1)"},
		{name: "maxThreadPoolSize", kind: kInt, def: "NumCPU"},
		{name: "queueCapacity", kind: kInt, def: "100"},
		{name: "keepAliveDuration", kind: kDuration, def: "20ms"},
		{name: "contextPropagators", kind: kList, ignored: whyProps},
		keyEventBuffer, keyStackTrace,
	},
	registry.RateLimiter: slices.Concat([]keySpec{
		{name: "limitForPeriod", kind: kInt, def: "50"},
		{name: "limitRefreshPeriod", kind: kDuration, def: "500ns"},
		{name: "timeoutDuration", kind: kDuration, def: "5s"},
	}, javaFunctions("drainPermissionsOnResult"), keyHealth, []keySpec{
		{name: "subscribeForEvents", kind: kBool, ignored: whyEvents},
		keyEventBuffer, keyStackTrace,
	}),
	registry.TimeLimiter: {
		{name: "timeoutDuration", kind: kDuration, def: "1s"},
		{name: "cancelRunningFuture", kind: kBool, def: "true"},
		keyEventBuffer,
	},
	Adaptive:    adaptiveKeys,
	Prioritizer: prioritizerKeys,
	Throttle:    throttleKeys,
}

// The patterns of levee's own sections, under the top-level key levee, which a
// registry.Registry does not hold: Config.NewOverload builds them.
const (
	// Adaptive is levee.adaptive: adaptive.Limiter instances (adaptive.Config).
	Adaptive registry.Pattern = "adaptive"
	// Prioritizer is levee.prioritizer: adaptive.Prioritizer instances
	// (adaptive.PrioritizerConfig).
	Prioritizer registry.Pattern = "prioritizer"
	// Throttle is levee.throttle: throttle.Throttler instances (throttle.Config).
	Throttle registry.Pattern = "throttle"
)

// The key tables of levee's own sections, levee.adaptive, levee.prioritizer and levee.throttle.
var (
	adaptiveKeys = []keySpec{
		{name: "limitAlgorithm", kind: kEnum, def: "VEGAS"},
		{name: "initialLimit", kind: kInt, def: "20"},
		{name: "minLimit", kind: kInt, def: "1"},
		{name: "maxLimit", kind: kInt, def: "1000"},
		{name: "maxQueued", kind: kInt, def: "0"},
		{name: "maxWaitDuration", kind: kDuration, def: "1s"},
		{name: "alpha", kind: kFloat, def: "1"},
		{name: "beta", kind: kFloat, def: "2"},
		{name: "probeInterval", kind: kDuration, def: "60s"},
		{name: "probeLimit", kind: kInt, def: "3 (at least minLimit)"},
		{name: "probeSamples", kind: kInt, def: "50"},
		{name: "backoffRatio", kind: kFloat, def: "0.9"},
		{name: "timeout", kind: kDuration, def: "5s"},
		{name: "tolerance", kind: kFloat, def: "1.5"},
		{name: "smoothing", kind: kFloat, def: "0.2"},
		{name: "queueSize", kind: kInt, def: "4"},
		{name: "longWindow", kind: kInt, def: "600"},
		{name: "latencyCeiling", kind: kDuration, def: "0"},
		{name: "prioritizer", kind: kString},
		{name: "partitions", kind: kMap},
		{name: "maxKeys", kind: kInt},
		{name: "rejectionDelay", kind: kDuration, def: "0"},
		{name: "maxDelayedCalls", kind: kInt, def: "100"},
	}
	prioritizerKeys = []keySpec{
		{name: "queueStart", kind: kFloat, def: "1"},
		{name: "queueFull", kind: kFloat, def: "2"},
		{name: "calibrationInterval", kind: kDuration, def: "1s"},
	}
	throttleKeys = []keySpec{
		{name: "k", kind: kFloat, def: "2"},
		{name: "window", kind: kDuration, def: "2m"},
		{name: "windowBuckets", kind: kInt, def: "20"},
		{name: "recordExceptions", kind: kList},
		keyClassBinding,
	}
)

// section describes one pattern's part of the file: resilience4j.<Key>.
type sectionSpec struct {
	pattern registry.Pattern
	key     string // Spring's key under resilience4j
	order   string // the aspect-order key, "" for none
	// defaultOrder is Spring's default aspect order: Ordered.LOWEST_PRECEDENCE minus the
	// pattern's rank, so Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(call))))).
	defaultOrder int
	// root is the top-level key the section is under: resilience4j for Resilience4j's
	// patterns, levee for levee's own.
	root string
}

const lowestPrecedence = 1<<31 - 1 // Java's Integer.MAX_VALUE, Spring's Ordered.LOWEST_PRECEDENCE

var sections = []sectionSpec{
	{registry.CircuitBreaker, "circuitbreaker", "circuitBreakerAspectOrder", lowestPrecedence - 3, "resilience4j"},
	{registry.Retry, "retry", "retryAspectOrder", lowestPrecedence - 4, "resilience4j"},
	{registry.Bulkhead, "bulkhead", "bulkheadAspectOrder", lowestPrecedence, "resilience4j"},
	{registry.WorkerPool, "thread-pool-bulkhead", "", 0, "resilience4j"},
	{registry.RateLimiter, "ratelimiter", "rateLimiterAspectOrder", lowestPrecedence - 2, "resilience4j"},
	{registry.TimeLimiter, "timelimiter", "timeLimiterAspectOrder", lowestPrecedence - 1, "resilience4j"},
	{pattern: Adaptive, key: "adaptive", root: "levee"},
	{pattern: Prioritizer, key: "prioritizer", root: "levee"},
	{pattern: Throttle, key: "throttle", root: "levee"},
}

// norm folds a key as Spring's relaxed binding does: case, dashes and underscores do not
// matter, so slidingWindowSize, sliding-window-size and SLIDINGWINDOWSIZE are one key.
func norm(k string) string {
	k = strings.ToLower(k)
	return strings.NewReplacer("-", "", "_", "").Replace(k)
}

// spec finds a key of pattern p by its folded name.
func spec(p registry.Pattern, folded string) (keySpec, bool) {
	for _, s := range specs[p] {
		if norm(s.name) == folded {
			return s, true
		}
	}
	return keySpec{}, false
}
