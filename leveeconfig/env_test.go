package leveeconfig_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/leveeconfig"
	"github.com/levee-go/levee/registry"
)

func TestEnvironmentOverridesTheFile(t *testing.T) {
	c, err := leveeconfig.Load("testdata/application.yml", leveeconfig.Options{Errors: paymentErrors, Environ: []string{
		"PATH=/usr/bin",
		"RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENT_SLIDINGWINDOWSIZE=20",
		"RESILIENCE4J_RETRY_INSTANCES_PAYMENT_IGNOREEXCEPTIONS=demo.r4j.InvalidOrderException",
		"RESILIENCE4J_BULKHEAD_CONFIGS_DEFAULT_MAXWAITDURATION=PT0.25S",
		"RESILIENCE4J_BULKHEAD_CONFIGS_DEFAULT_FAIRCALLHANDLINGSTRATEGYENABLED=false",
		"RESILIENCE4J_THREAD_POOL_BULKHEAD_INSTANCES_REPORT_QUEUECAPACITY=0",
		"RESILIENCE4J_RATELIMITER_INSTANCES_PAYMENT_GATEWAY_LIMITFORPERIOD=5",
		"RESILIENCE4J_RATELIMITER_TAGS_TEAM=checkout",
		"RESILIENCE4J_RATELIMITER_RATELIMITERASPECTORDER=1",
		"RESILIENCE4J_RATELIMITER_INSTANCES_PAYMENT_GATEWAY_REGISTERHEALTHINDICATOR=true",
	}})
	require.NoError(t, err)
	assert.Equal(t, 20, c.CircuitBreakers.Instances["payment"].SlidingWindowSize)
	assert.Equal(t, 5, c.CircuitBreakers.Instances["payment"].MinimumNumberOfCalls, "the file's other keys stay")
	assert.Equal(t, []error{paymentErrors["demo.r4j.InvalidOrderException"]}, c.Retries.Instances["payment"].IgnoreErrors)
	assert.Equal(t, 250*time.Millisecond, c.Bulkheads.Configs["default"].MaxWaitDuration)
	assert.True(t, c.Bulkheads.Instances["payment"].DisableFairCallHandling,
		"the variable's configs.default is the base of the file's instance")
	assert.Equal(t, time.Duration(0), c.Bulkheads.Instances["payment"].MaxWaitDuration, "the instance's own key wins")
	assert.Equal(t, async.NoQueue, c.WorkerPools.Instances["report"].QueueCapacity)
	assert.Equal(t, 5, c.RateLimiters.Instances["payment_gateway"].LimitForPeriod)
	assert.Equal(t, map[string]string{"team": "checkout"}, c.RateLimiters.Tags)
	assert.Equal(t, []registry.Pattern{registry.RateLimiter, registry.Retry, registry.CircuitBreaker,
		registry.TimeLimiter, registry.Bulkhead}, c.Order)

	settings := c.Settings(registry.CircuitBreaker, "payment")
	assert.Equal(t, leveeconfig.Setting{Key: "slidingWindowSize", Value: "20",
		Source: leveeconfig.Source{Env: "RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENT_SLIDINGWINDOWSIZE"}}, settings[4])
	assert.Equal(t, "env RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENT_SLIDINGWINDOWSIZE", settings[4].Source.String())

	var ws []string
	for _, w := range c.Warnings {
		ws = append(ws, w.Level.String()+": "+w.String())
	}
	assert.Equal(t, []string{
		"likely mistake: env RESILIENCE4J_RATELIMITER_INSTANCES_PAYMENT_GATEWAY_LIMITFORPERIOD: resilience4j.ratelimiter.instances.payment_gateway.limitForPeriod: " +
			"limitRefreshPeriod is not set: Resilience4j's default cycle is 500ns, so 5 calls are permitted every 500ns; set limitRefreshPeriod (e.g. 1s)",
		"note: env RESILIENCE4J_RATELIMITER_INSTANCES_PAYMENT_GATEWAY_LIMITFORPERIOD: resilience4j.ratelimiter.instances.payment_gateway.limitForPeriod: " +
			"timeoutDuration is not set: a call waits up to Resilience4j's default 5s for a permission",
		"note: env RESILIENCE4J_RATELIMITER_INSTANCES_PAYMENT_GATEWAY_REGISTERHEALTHINDICATOR: resilience4j.ratelimiter.instances.payment_gateway.registerHealthIndicator: ignored: leveestatus's health lists circuit breakers only",
		"note: env RESILIENCE4J_RATELIMITER_RATELIMITERASPECTORDER: only rateLimiterAspectOrder of the 5 aspect orders set; the others keep Spring's defaults (circuitBreakerAspectOrder: 2147483644 (Integer.MAX_VALUE-3), retryAspectOrder: 2147483643 (Integer.MAX_VALUE-4), bulkheadAspectOrder: 2147483647 (Integer.MAX_VALUE), timeLimiterAspectOrder: 2147483646 (Integer.MAX_VALUE-1)), so the order is RateLimiter(Retry(CircuitBreaker(TimeLimiter(Bulkhead(call)))))",
	}, ws)
}

func TestEnvironmentErrorsNameTheVariable(t *testing.T) {
	_, err := leveeconfig.Load("testdata/application.yml", leveeconfig.Options{Errors: paymentErrors, Environ: []string{
		"RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENT_SLIDINGWINDOWSIZE=twenty",
		"RESILIENCE4J_RETRY_INSTANCES_PAYMENT_MAXATTEMPT=2",
		"RESILIENCE4J_RETRY_PAYMENT=2",
		"RESILIENCE4J_SCHEDULER_X=1",
		"RESILIENCE4J_RETRY_INSTANCES_PAYMENT_RETRYEXCEPTIONS=demo.r4j.Nope",
	}})
	assert.EqualError(t, err, `env RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENT_SLIDINGWINDOWSIZE: resilience4j.circuitbreaker.instances.payment.slidingWindowSize: "twenty" is not an integer: must be at least 1
env RESILIENCE4J_RETRY_INSTANCES_PAYMENT_MAXATTEMPT: resilience4j.retry.instances.payment.MAXATTEMPT: unknown key of retry; did you mean maxAttempts?
env RESILIENCE4J_RETRY_INSTANCES_PAYMENT_RETRYEXCEPTIONS: resilience4j.retry.instances.payment.retryExceptions: unknown exception class "demo.r4j.Nope": map it in Options.Errors to a Go error (a sentinel, matched with errors.Is) or to levee.ErrorType[*T]() (a type, matched with errors.As), write a built-in class (java.io.IOException, java.net.ConnectException, ...: see the package documentation), or skip it with ignoreClassBindingExceptions: true
env RESILIENCE4J_RETRY_PAYMENT: names no key of resilience4j.retry: use RESILIENCE4J_RETRY_INSTANCES_<NAME>_<KEY> or RESILIENCE4J_RETRY_CONFIGS_<NAME>_<KEY>
env RESILIENCE4J_SCHEDULER_X: names no section of resilience4j: levee reads circuitbreaker, retry, bulkhead, thread-pool-bulkhead, ratelimiter, timelimiter`, err.Error())
}

func TestEnvironmentNameMatchesTheFileWhateverItsSpelling(t *testing.T) {
	c, err := load(t, "resilience4j:\n  bulkhead:\n    instances:\n      payment-gateway:\n        maxConcurrentCalls: 3\n",
		"RESILIENCE4J_BULKHEAD_INSTANCES_PAYMENT_GATEWAY_MAXCONCURRENTCALLS=9")
	require.NoError(t, err)
	assert.Equal(t, []string{"payment-gateway"}, c.Names(registry.Bulkhead))
	assert.Equal(t, 9, c.Bulkheads.Instances["payment-gateway"].MaxConcurrentCalls)
}

func TestEnvironmentDefaultsToTheProcess(t *testing.T) {
	t.Setenv("RESILIENCE4J_BULKHEAD_INSTANCES_PAYMENT_MAXCONCURRENTCALLS", "7")
	c, err := leveeconfig.Load("testdata/application.yml", leveeconfig.Options{Errors: paymentErrors})
	require.NoError(t, err)
	assert.Equal(t, 7, c.Bulkheads.Instances["payment"].MaxConcurrentCalls)
}
