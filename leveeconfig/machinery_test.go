package leveeconfig_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/leveeconfig"
	"github.com/levee-go/levee/registry"
)

// levelled renders each warning as "level: warning".
func levelled(c *leveeconfig.Config) []string {
	var ws []string
	for _, w := range c.Warnings {
		ws = append(ws, w.Level.String()+": "+w.String())
	}
	return ws
}

const (
	msgMetricsOn  = "ignored: levee's metrics are those of the collector the application registers (leveeprom.NewCollector, leveeotel.New), which the file does not switch"
	msgMetricsOff = "ignored: levee publishes metrics only through a collector the application registers (leveeprom.NewCollector, leveeotel.New): to publish none, register none"
	msgLegacy     = "ignored: it chooses how Resilience4j binds its Micrometer meters; levee's collectors (leveeprom.NewCollector, leveeotel.New) have one way"
	msgScheduler  = "ignored: Go waits on the runtime's timers, with no scheduler thread pool to size"
	msgProps      = "ignored: Go passes values along in the call's context.Context"
)

// The starter's metrics switches and its scheduled executor configure Spring and Java
// machinery: accepted with a warning, a Note unless the file turns metrics off, which levee
// does not do on its own.
func TestSpringMachineryKeysAreIgnoredWithAWarning(t *testing.T) {
	c, err := load(t, `resilience4j:
  circuitbreaker:
    metrics:
      enabled: true
      legacy:
        enabled: true
    instances:
      payment:
        slidingWindowSize: 10
        minimumNumberOfCalls: 10
  retry:
    metrics.enabled: false
    metrics.legacy.enabled: false
  ratelimiter:
    metrics:
      enabled: true
  bulkhead:
    metrics:
      enabled: true
  thread-pool-bulkhead:
    metrics:
      legacy.enabled: true
  timelimiter:
    metrics:
      enabled: "TRUE"
  scheduled:
    executor:
      corePoolSize: 4
      context-propagators:
        - demo.r4j.MdcContextPropagator
`)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"note: app.yml:4: resilience4j.circuitbreaker.metrics.enabled: " + msgMetricsOn,
		"note: app.yml:6: resilience4j.circuitbreaker.metrics.legacy.enabled: " + msgLegacy,
		"likely mistake: app.yml:12: resilience4j.retry.metrics.enabled: " + msgMetricsOff,
		"note: app.yml:13: resilience4j.retry.metrics.legacy.enabled: " + msgLegacy,
		"note: app.yml:16: resilience4j.ratelimiter.metrics.enabled: " + msgMetricsOn,
		"note: app.yml:19: resilience4j.bulkhead.metrics.enabled: " + msgMetricsOn,
		"note: app.yml:22: resilience4j.thread-pool-bulkhead.metrics.legacy.enabled: " + msgLegacy,
		"note: app.yml:25: resilience4j.timelimiter.metrics.enabled: " + msgMetricsOn,
		"note: app.yml:28: resilience4j.scheduled.executor.corePoolSize: " + msgScheduler,
		"note: app.yml:29: resilience4j.scheduled.executor.context-propagators: " + msgProps,
	}, levelled(c))
	assert.Equal(t, 10, c.CircuitBreakers.Instances["payment"].SlidingWindowSize, "the section's instances are read")
}

func TestSpringMachineryKeysFromTheEnvironment(t *testing.T) {
	c, err := load(t, "resilience4j:\n  retry:\n    instances:\n      payment: {}\n",
		"RESILIENCE4J_CIRCUITBREAKER_METRICS_ENABLED=false",
		"RESILIENCE4J_THREAD_POOL_BULKHEAD_METRICS_LEGACY_ENABLED=true",
		"RESILIENCE4J_SCHEDULED_EXECUTOR_COREPOOLSIZE=2",
		"RESILIENCE4J_SCHEDULED_EXECUTOR_CONTEXTPROPAGATORS_0=demo.r4j.MdcContextPropagator",
	)
	require.NoError(t, err)
	// Warnings from the environment come sorted by the variables' names.
	assert.Equal(t, []string{
		"likely mistake: env RESILIENCE4J_CIRCUITBREAKER_METRICS_ENABLED: resilience4j.circuitbreaker.metrics.enabled: " + msgMetricsOff,
		"note: env RESILIENCE4J_SCHEDULED_EXECUTOR_CONTEXTPROPAGATORS_0: resilience4j.scheduled.executor.contextPropagators[0]: " + msgProps,
		"note: env RESILIENCE4J_SCHEDULED_EXECUTOR_COREPOOLSIZE: resilience4j.scheduled.executor.corePoolSize: " + msgScheduler,
		"note: env RESILIENCE4J_THREAD_POOL_BULKHEAD_METRICS_LEGACY_ENABLED: resilience4j.thread-pool-bulkhead.metrics.legacy.enabled: " + msgLegacy,
	}, levelled(c))
}

// Ignored, but Spring would still bind them: a value of the wrong type, or a corePoolSize
// Resilience4j's setter refuses, fails the load.
func TestSpringMachineryKeysAreTypeChecked(t *testing.T) {
	_, err := load(t, `resilience4j:
  circuitbreaker:
    metrics:
      enabled: yes please
      legacy:
        enabled: 1
        publisher: true
      exporter: prometheus
  scheduled:
    executor:
      corePoolSize: 0
      maxPoolSize: 4
    timer: {}
`, "RESILIENCE4J_SCHEDULED_EXECUTOR_COREPOOLSIZE=four", "RESILIENCE4J_RETRY_METRICS_ENABLED=")
	require.Error(t, err)
	assert.Equal(t, `app.yml:4: resilience4j.circuitbreaker.metrics.enabled: "yes please" is not true or false
app.yml:6: resilience4j.circuitbreaker.metrics.legacy.enabled: "1" is not true or false
app.yml:7: resilience4j.circuitbreaker.metrics.legacy.publisher: unknown key: metrics.legacy takes enabled
app.yml:8: resilience4j.circuitbreaker.metrics.exporter: unknown key: metrics takes enabled and legacy.enabled
app.yml:11: resilience4j.scheduled.executor.corePoolSize: must be at least 1, got 0
app.yml:12: resilience4j.scheduled.executor.maxPoolSize: unknown key: scheduled.executor takes corePoolSize and contextPropagators
app.yml:13: resilience4j.scheduled.timer: unknown key: scheduled takes executor
env RESILIENCE4J_RETRY_METRICS_ENABLED: resilience4j.retry.metrics.enabled: empty value
env RESILIENCE4J_SCHEDULED_EXECUTOR_COREPOOLSIZE: resilience4j.scheduled.executor.corePoolSize: "four" is not an integer in [-2147483648, 2147483647]`, err.Error())
}

// A typical Spring Boot application.yml: levee reads its resilience4j section and leaves
// Spring's own keys (management, spring, server) alone, silently, as it always has.
func TestTypicalSpringFileLoads(t *testing.T) {
	const yml = `spring:
  application:
    name: checkout
server:
  port: 8080
management:
  endpoints:
    web:
      exposure:
        include: "health,info,prometheus,circuitbreakers"
  endpoint.health.show-details: always
  health:
    circuitbreakers:
      enabled: true
    ratelimiters.enabled: false
resilience4j:
  circuitbreaker:
    metrics:
      enabled: true
    instances:
      payment:
        registerHealthIndicator: true
        slidingWindowSize: 10
        minimumNumberOfCalls: 10
`
	c, err := load(t, yml)
	require.NoError(t, err)
	assert.Equal(t, []string{"note: app.yml:19: resilience4j.circuitbreaker.metrics.enabled: " + msgMetricsOn}, levelled(c))
	assert.Equal(t, 10, c.CircuitBreakers.Instances["payment"].SlidingWindowSize)

	const props = `spring.application.name=checkout
server.port=8080
management.endpoints.web.exposure.include=*
management.health.circuitbreakers.enabled=true
resilience4j.circuitbreaker.metrics.legacy.enabled=true
resilience4j.scheduled.executor.core-pool-size=2
resilience4j.scheduled.executor.context-propagators[0]=demo.r4j.MdcContextPropagator
resilience4j.circuitbreaker.instances.payment.sliding-window-size=10
resilience4j.circuitbreaker.instances.payment.minimum-number-of-calls=10
`
	c, err = leveeconfig.Parse("application.properties", []byte(props), leveeconfig.Options{Environ: []string{}})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"note: application.properties:5: resilience4j.circuitbreaker.metrics.legacy.enabled: " + msgLegacy,
		"note: application.properties:6: resilience4j.scheduled.executor.core-pool-size: " + msgScheduler,
		"note: application.properties:7: resilience4j.scheduled.executor.context-propagators[0]: " + msgProps,
	}, levelled(c))
	assert.Equal(t, []string{"payment"}, c.Names(registry.CircuitBreaker))
}

// A variable writing a key's words apart (SLIDING_WINDOW_SIZE) names, by Spring's rule for
// variables, the key SIZE of an instance payment_sliding_window: the error names the key
// meant and the variable that sets it.
func TestEnvironmentKeyWrittenWithUnderscores(t *testing.T) {
	_, err := load(t, "resilience4j:\n  circuitbreaker:\n    instances:\n      paymentService: {}\n",
		"RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENTSERVICE_SLIDING_WINDOW_SIZE=20",
		"RESILIENCE4J_RATELIMITER_CONFIGS_PAYMENT_GATEWAY_LIMIT_FOR_PERIOD=5",
		"RESILIENCE4J_RETRY_INSTANCES_PAYMENT_RETRY_EXCEPTIONS_0=java.io.IOException",
		"RESILIENCE4J_RETRY_INSTANCES_PAYMENT_NO_SUCH_KEY=1",
	)
	require.Error(t, err)
	assert.Equal(t, "env RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENTSERVICE_SLIDING_WINDOW_SIZE: "+
		"resilience4j.circuitbreaker.instances.paymentservice.sliding.window.size: unknown key of circuitbreaker: "+
		"a variable's underscores are dots, as in Spring, so SLIDING_WINDOW_SIZE is not slidingWindowSize; "+
		"for slidingWindowSize of paymentservice write RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENTSERVICE_SLIDINGWINDOWSIZE "+
		"(Spring's rule: a dot becomes an underscore, dashes are removed, upper case)\n"+
		"env RESILIENCE4J_RATELIMITER_CONFIGS_PAYMENT_GATEWAY_LIMIT_FOR_PERIOD: "+
		"resilience4j.ratelimiter.configs.payment.gateway.limit.for.period: unknown key of ratelimiter: "+
		"a variable's underscores are dots, as in Spring, so LIMIT_FOR_PERIOD is not limitForPeriod; "+
		"for limitForPeriod of payment_gateway write RESILIENCE4J_RATELIMITER_CONFIGS_PAYMENT_GATEWAY_LIMITFORPERIOD "+
		"(Spring's rule: a dot becomes an underscore, dashes are removed, upper case)\n"+
		"env RESILIENCE4J_RETRY_INSTANCES_PAYMENT_NO_SUCH_KEY: resilience4j.retry.instances.payment_no_such.KEY: unknown key of retry\n"+
		"env RESILIENCE4J_RETRY_INSTANCES_PAYMENT_RETRY_EXCEPTIONS_0: "+
		"resilience4j.retry.instances.payment.retry.exceptions.0: unknown key of retry: "+
		"a variable's underscores are dots, as in Spring, so RETRY_EXCEPTIONS_0 is not retryExceptions; "+
		"for retryExceptions of payment write RESILIENCE4J_RETRY_INSTANCES_PAYMENT_RETRYEXCEPTIONS_0 "+
		"(Spring's rule: a dot becomes an underscore, dashes are removed, upper case)", err.Error())
}

func TestLeveeEnvironmentKeyWrittenWithUnderscores(t *testing.T) {
	_, err := load(t, "levee:\n  adaptive:\n    instances:\n      checkout: {}\n",
		"LEVEE_ADAPTIVE_INSTANCES_CHECKOUT_MAX_LIMIT=200")
	require.Error(t, err)
	assert.Equal(t, "env LEVEE_ADAPTIVE_INSTANCES_CHECKOUT_MAX_LIMIT: levee.adaptive.instances.checkout.max.limit: "+
		"unknown key of adaptive: a variable's underscores are dots, as in Spring, so MAX_LIMIT is not maxLimit; "+
		"for maxLimit of checkout write LEVEE_ADAPTIVE_INSTANCES_CHECKOUT_MAXLIMIT "+
		"(Spring's rule: a dot becomes an underscore, dashes are removed, upper case)", err.Error())
}
