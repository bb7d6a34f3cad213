package leveeconfig_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/leveeconfig"
)

func TestBaseConfigWithNoConfigsSaysThereAreNone(t *testing.T) {
	_, err := load(t, instance("retry", "baseConfig: shared"))
	assert.EqualError(t, err, "app.yml:5: resilience4j.retry.instances.x.baseConfig: \"shared\" names no entry of resilience4j.retry.configs (there are none)")
}

func TestIntegerOutOfIntRangeReportsTheKeysRange(t *testing.T) {
	_, err := leveeconfig.Parse("app.yml", []byte(instance("circuitbreaker", "")), leveeconfig.Options{Environ: []string{
		"RESILIENCE4J_CIRCUITBREAKER_INSTANCES_X_MINIMUMNUMBEROFCALLS=-99999999999",
		"RESILIENCE4J_CIRCUITBREAKER_INSTANCES_X_SLIDINGWINDOWSIZE=99999999999",
		"RESILIENCE4J_BULKHEAD_INSTANCES_X_MAXCONCURRENTCALLS=+3000000000",
	}})
	assert.EqualError(t, err, `env RESILIENCE4J_BULKHEAD_INSTANCES_X_MAXCONCURRENTCALLS: resilience4j.bulkhead.instances.x.maxConcurrentCalls: must be at least 0 and at most 2147483647, got +3000000000
env RESILIENCE4J_CIRCUITBREAKER_INSTANCES_X_MINIMUMNUMBEROFCALLS: resilience4j.circuitbreaker.instances.x.minimumNumberOfCalls: must be at least 1 and at most 2147483647, got -99999999999
env RESILIENCE4J_CIRCUITBREAKER_INSTANCES_X_SLIDINGWINDOWSIZE: resilience4j.circuitbreaker.instances.x.slidingWindowSize: must be at least 1 and at most 1048576, got 99999999999`)

	_, err = load(t, instance("retry", "maxAttempts: 4294967296"))
	assert.EqualError(t, err, "app.yml:5: resilience4j.retry.instances.x.maxAttempts: must be at least 1 and at most 2147483647, got 4294967296")
}

func TestUnknownKeySuggestsTheClosest(t *testing.T) {
	_, err := load(t, `resilience4j:
  circuitbreaker:
    instances:
      payment:
        slidingWindowSzie: 5
        sliding-window-tipe: COUNT_BASED
        base-confg: x
        slidingWindowSizeInSeconds: 5
  circuitbrekaer: {}
  retry:
    instance: {}
`)
	assert.EqualError(t, err, `app.yml:5: resilience4j.circuitbreaker.instances.payment.slidingWindowSzie: unknown key of circuitbreaker; did you mean slidingWindowSize?
app.yml:6: resilience4j.circuitbreaker.instances.payment.sliding-window-tipe: unknown key of circuitbreaker; did you mean slidingWindowType?
app.yml:7: resilience4j.circuitbreaker.instances.payment.base-confg: unknown key of circuitbreaker; did you mean baseConfig?
app.yml:8: resilience4j.circuitbreaker.instances.payment.slidingWindowSizeInSeconds: unknown key of circuitbreaker
app.yml:9: resilience4j.circuitbrekaer: unknown key: levee reads circuitbreaker, retry, bulkhead, thread-pool-bulkhead, ratelimiter, timelimiter; did you mean circuitbreaker?
app.yml:11: resilience4j.retry.instance: unknown key: retry takes configs, instances, tags and retryAspectOrder; did you mean instances?`)
}

// An error of two keys together names both, each with its line, in the file's words.
func TestConflictingKeysNameBothInTheFilesWords(t *testing.T) {
	for _, tc := range []struct{ section, keys, want string }{
		{"thread-pool-bulkhead", "coreThreadPoolSize: 4\n        maxThreadPoolSize: 2",
			"app.yml:5: resilience4j.thread-pool-bulkhead.instances.x.coreThreadPoolSize: must be <= maxThreadPoolSize (2), got 4 (maxThreadPoolSize: app.yml:6)"},
		{"ratelimiter", "limitForPeriod: 2000000\n        limitRefreshPeriod: 1ns\n        timeoutDuration: 1s",
			"app.yml:5: resilience4j.ratelimiter.instances.x.limitForPeriod: limitForPeriod × (timeoutDuration/limitRefreshPeriod + 2) must be at most " +
				"1099511627776 (the most permissions a rate limiter can reserve), got 2000000 × 1000000002 (timeoutDuration: app.yml:7, limitRefreshPeriod: app.yml:6)"},
		{"retry", "waitDuration: 1s\n        enableExponentialBackoff: true\n        exponentialMaxWaitDuration: 500ms",
			"app.yml:7: resilience4j.retry.instances.x.exponentialMaxWaitDuration: must be 0 (no cap) or at least waitDuration (1s), got 500ms"},
		{"circuitbreaker", "enableExponentialBackoff: true\n        exponentialBackoffMultiplier: 0.5",
			"app.yml:6: resilience4j.circuitbreaker.instances.x.exponentialBackoffMultiplier: must be at least 1 with enableExponentialBackoff: true, got 0.5"},
		{"retry", "enableRandomizedWait: true\n        randomizedWaitFactor: 1",
			"app.yml:6: resilience4j.retry.instances.x.randomizedWaitFactor: must be in [0, 1) with enableRandomizedWait: true, got 1"},
	} {
		_, err := load(t, instance(tc.section, tc.keys))
		assert.EqualError(t, err, tc.want)
	}
	// From the environment, the variable is named.
	_, err := load(t, instance("thread-pool-bulkhead", "maxThreadPoolSize: 2"), "RESILIENCE4J_THREADPOOLBULKHEAD_INSTANCES_X_CORETHREADPOOLSIZE=4")
	assert.EqualError(t, err, "env RESILIENCE4J_THREADPOOLBULKHEAD_INSTANCES_X_CORETHREADPOOLSIZE: resilience4j.thread-pool-bulkhead.instances.x.coreThreadPoolSize: "+
		"must be <= maxThreadPoolSize (2), got 4 (maxThreadPoolSize: app.yml:5)")
}
