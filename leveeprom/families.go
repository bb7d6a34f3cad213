package leveeprom

import "github.com/prometheus/client_golang/prometheus"

// The names of the metric families, Resilience4j's Micrometer names as Micrometer's Prometheus
// registry exposes them (dots become underscores, counters end in _total, a timer in seconds
// becomes a summary named _seconds).
const (
	CircuitBreakerState               = "resilience4j_circuitbreaker_state"
	CircuitBreakerCalls               = "resilience4j_circuitbreaker_calls_seconds"
	CircuitBreakerCallsMax            = "resilience4j_circuitbreaker_calls_seconds_max"
	CircuitBreakerNotPermittedCalls   = "resilience4j_circuitbreaker_not_permitted_calls_total"
	CircuitBreakerBufferedCalls       = "resilience4j_circuitbreaker_buffered_calls"
	CircuitBreakerSlowCalls           = "resilience4j_circuitbreaker_slow_calls"
	CircuitBreakerFailureRate         = "resilience4j_circuitbreaker_failure_rate"
	CircuitBreakerSlowCallRate        = "resilience4j_circuitbreaker_slow_call_rate"
	RetryCalls                        = "resilience4j_retry_calls_total"
	BulkheadAvailableConcurrentCalls  = "resilience4j_bulkhead_available_concurrent_calls"
	BulkheadMaxAllowedConcurrentCalls = "resilience4j_bulkhead_max_allowed_concurrent_calls"
	BulkheadQueueDepth                = "resilience4j_bulkhead_queue_depth"
	BulkheadQueueCapacity             = "resilience4j_bulkhead_queue_capacity"
	BulkheadThreadPoolSize            = "resilience4j_bulkhead_thread_pool_size"
	BulkheadMaxThreadPoolSize         = "resilience4j_bulkhead_max_thread_pool_size"
	BulkheadCoreThreadPoolSize        = "resilience4j_bulkhead_core_thread_pool_size"
	BulkheadActiveThreadCount         = "resilience4j_bulkhead_active_thread_count"
	BulkheadAvailableThreadCount      = "resilience4j_bulkhead_available_thread_count"
	RateLimiterAvailablePermissions   = "resilience4j_ratelimiter_available_permissions"
	RateLimiterWaitingThreads         = "resilience4j_ratelimiter_waiting_threads"
	TimeLimiterCalls                  = "resilience4j_timelimiter_calls_total"
)

// The label names every family has besides the tag keys.
const (
	labelName  = "name"
	labelKind  = "kind"
	labelState = "state"
)

// family is one metric family: its name, HELP text, type and the label it has besides name
// and the tag keys ("" for none).
type family struct {
	name, help string
	extra      string
	typ        prometheus.ValueType // of the constant metrics sent; a summary's is unused
	more       []string             // labels after extra, for levee's own families
}

// The families, in the order Describe sends them. The HELP texts are Resilience4j's
// descriptions; where Resilience4j describes each kind of a family apart, the text is the one
// of the kind it registers first, which is the one Micrometer's Prometheus registry shows.
var (
	famState        = family{CircuitBreakerState, "The states of the circuit breaker", labelState, prometheus.GaugeValue, nil}
	famCalls        = family{CircuitBreakerCalls, "Total number of successful calls", labelKind, prometheus.UntypedValue, nil}
	famCallsMax     = family{CircuitBreakerCallsMax, "Total number of successful calls", labelKind, prometheus.GaugeValue, nil}
	famNotPermitted = family{CircuitBreakerNotPermittedCalls, "Total number of not permitted calls", labelKind, prometheus.CounterValue, nil}
	famBuffered     = family{CircuitBreakerBufferedCalls, "The number of buffered failed calls stored in the ring buffer", labelKind, prometheus.GaugeValue, nil}
	famSlow         = family{CircuitBreakerSlowCalls, "The number of slow successful which were slower than a certain threshold", labelKind, prometheus.GaugeValue, nil}
	famFailureRate  = family{CircuitBreakerFailureRate, "The failure rate of the circuit breaker", "", prometheus.GaugeValue, nil}
	famSlowCallRate = family{CircuitBreakerSlowCallRate, "The slow call of the circuit breaker", "", prometheus.GaugeValue, nil}
	famRetryCalls   = family{RetryCalls, "The number of successful calls without a retry attempt", labelKind, prometheus.CounterValue, nil}
	famBHAvailable  = family{BulkheadAvailableConcurrentCalls, "The number of available permissions", "", prometheus.GaugeValue, nil}
	famBHMax        = family{BulkheadMaxAllowedConcurrentCalls, "The maximum number of available permissions", "", prometheus.GaugeValue, nil}
	famWPQueueDepth = family{BulkheadQueueDepth, "The queue depth", "", prometheus.GaugeValue, nil}
	famWPQueueCap   = family{BulkheadQueueCapacity, "The queue capacity", "", prometheus.GaugeValue, nil}
	famWPSize       = family{BulkheadThreadPoolSize, "The thread pool size", "", prometheus.GaugeValue, nil}
	famWPMaxSize    = family{BulkheadMaxThreadPoolSize, "The maximum thread pool size", "", prometheus.GaugeValue, nil}
	famWPCoreSize   = family{BulkheadCoreThreadPoolSize, "The core thread pool size", "", prometheus.GaugeValue, nil}
	famWPActive     = family{BulkheadActiveThreadCount, "The number of active threads", "", prometheus.GaugeValue, nil}
	famWPAvailable  = family{BulkheadAvailableThreadCount, "The number of available threads", "", prometheus.GaugeValue, nil}
	famRLAvailable  = family{RateLimiterAvailablePermissions, "The number of available permissions", "", prometheus.GaugeValue, nil}
	famRLWaiting    = family{RateLimiterWaitingThreads, "The number of waiting threads", "", prometheus.GaugeValue, nil}
	famTLCalls      = family{TimeLimiterCalls, "The number of successful calls", labelKind, prometheus.CounterValue, nil}
)

// Families lists the names of every metric family a Collector exports, in a fixed order.
func Families() []string {
	out := make([]string, len(allFamilies))
	for i, f := range allFamilies {
		out[i] = f.name
	}
	return out
}

var allFamilies = append([]*family{
	&famState, &famCalls, &famCallsMax, &famNotPermitted, &famBuffered, &famSlow, &famFailureRate,
	&famSlowCallRate, &famRetryCalls, &famBHAvailable, &famBHMax, &famWPQueueDepth,
	&famWPQueueCap, &famWPSize, &famWPMaxSize, &famWPCoreSize, &famWPActive, &famWPAvailable,
	&famRLAvailable, &famRLWaiting, &famTLCalls,
}, leveeFamilies...)

// descs holds one Desc per family, built once by NewCollector for its tag keys.
type descs map[*family]*prometheus.Desc

func newDescs(tagKeys []string, err error) descs {
	d := make(descs, len(allFamilies))
	for _, f := range allFamilies {
		if err != nil {
			d[f] = prometheus.NewInvalidDesc(err)
			continue
		}
		labels := []string{labelName}
		if f.extra != "" {
			labels = append(labels, f.extra)
		}
		labels = append(labels, f.more...)
		labels = append(labels, tagKeys...)
		d[f] = prometheus.NewDesc(f.name, f.help, labels, nil)
	}
	return d
}
