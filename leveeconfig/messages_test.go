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
env RESILIENCE4J_CIRCUITBREAKER_INSTANCES_X_SLIDINGWINDOWSIZE: resilience4j.circuitbreaker.instances.x.slidingWindowSize: must be at least 1 and at most 2147483647, got 99999999999`)

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
