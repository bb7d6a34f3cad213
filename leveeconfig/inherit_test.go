package leveeconfig_test

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/leveeconfig"
	"github.com/levee-go/levee/registry"
)

const inheriting = `resilience4j:
  circuitbreaker:
    tags:
      team: checkout
    configs:
      default:
        slidingWindowSize: 20
        minimumNumberOfCalls: 20
      strict:
        baseConfig: default
        failureRateThreshold: 10
      stricter:
        baseConfig: strict
        waitDurationInOpenState: 30s
    instances:
      payment:
        baseConfig: stricter
        minimumNumberOfCalls: 5
      stock:
        failureRateThreshold: 80
      audit: {}
`

func TestBaseConfigAndDefaultInheritance(t *testing.T) {
	c, err := load(t, inheriting)
	require.NoError(t, err)
	cbs := c.CircuitBreakers
	assert.Equal(t, []string{"default", "strict", "stricter"}, sortedKeys(cbs.Configs))

	p := cbs.Instances["payment"]
	assert.Equal(t, 20, p.SlidingWindowSize, "from default through strict and stricter")
	assert.Equal(t, 5, p.MinimumNumberOfCalls, "its own")
	assert.Equal(t, float32(10), p.FailureRateThreshold, "from strict")
	assert.Equal(t, 30*time.Second, p.WaitDurationInOpenState, "from stricter")

	s := cbs.Instances["stock"]
	assert.Equal(t, 20, s.SlidingWindowSize, "no baseConfig: configs.default")
	assert.Equal(t, float32(80), s.FailureRateThreshold)
	assert.Equal(t, 20, cbs.Instances["audit"].MinimumNumberOfCalls)

	assert.Equal(t, []leveeconfig.Setting{
		{Key: "failureRateThreshold", Value: "10", Source: leveeconfig.Source{File: "app.yml", Line: 11}},
		{Key: "slowCallRateThreshold", Value: "100"},
		{Key: "slowCallDurationThreshold", Value: "60s"},
		{Key: "slidingWindowType", Value: "COUNT_BASED"},
		{Key: "slidingWindowSize", Value: "20", Source: leveeconfig.Source{File: "app.yml", Line: 7}},
		{Key: "minimumNumberOfCalls", Value: "5", Source: leveeconfig.Source{File: "app.yml", Line: 18}},
		{Key: "waitDurationInOpenState", Value: "30s", Source: leveeconfig.Source{File: "app.yml", Line: 14}},
		{Key: "permittedNumberOfCallsInHalfOpenState", Value: "10"},
		{Key: "maxWaitDurationInHalfOpenState", Value: "0"},
		{Key: "automaticTransitionFromOpenToHalfOpenEnabled", Value: "false"},
		{Key: "enableExponentialBackoff", Value: "false"},
		{Key: "exponentialBackoffMultiplier", Value: "1.5"},
		{Key: "enableRandomizedWait", Value: "false"},
		{Key: "randomizedWaitFactor", Value: "0.5"},
	}, c.Settings(registry.CircuitBreaker, "payment"))
	assert.Nil(t, c.Settings(registry.CircuitBreaker, "missing"))

	reg, err := c.Registry()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"team": "checkout"}, reg.Tags(registry.CircuitBreaker, "payment"))
	strict, ok := reg.CircuitBreakerConfig("strict")
	require.True(t, ok)
	assert.Equal(t, float32(10), strict.FailureRateThreshold)
	// A name the file does not declare gets configs.default, as registry.circuitBreaker(name).
	other, err := reg.CircuitBreaker("other")
	require.NoError(t, err)
	assert.Equal(t, 20, other.Config().SlidingWindowSize)
	assert.Equal(t, "registry{circuitbreaker: audit, other, payment, stock}", reg.String())
}

func TestBaseConfigErrors(t *testing.T) {
	_, err := load(t, `resilience4j:
  retry:
    configs:
      a:
        baseConfig: b
      b:
        baseConfig: a
    instances:
      x:
        baseConfig: missing
`)
	assert.EqualError(t, err, "app.yml:5: resilience4j.retry.configs.a.baseConfig: a cycle of baseConfig: b -> a -> b\n"+
		"app.yml:7: resilience4j.retry.configs.b.baseConfig: a cycle of baseConfig: a -> b -> a\n"+
		"app.yml:10: resilience4j.retry.instances.x.baseConfig: \"missing\" names no entry of resilience4j.retry.configs (have: a, b)")
}

func TestBadValueOfABaseIsReportedOnce(t *testing.T) {
	_, err := load(t, `resilience4j:
  bulkhead:
    configs:
      default:
        maxConcurrentCalls: -1
    instances:
      a: {}
      b: {}
`)
	assert.EqualError(t, err, "app.yml:5: resilience4j.bulkhead.configs.default.maxConcurrentCalls: must be at least 0, got -1")
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// configs.default lies beneath a baseConfig for the retry (and the other registries but the
// breaker's), as Resilience4j builds their named configs from the default config; the
// breaker's instance gets its base config's keys alone.
func TestDefaultBeneathBaseConfigPerPattern(t *testing.T) {
	c, err := load(t, `resilience4j:
  retry:
    configs:
      default:
        maxAttempts: 5
        waitDuration: 1s
      fast:
        waitDuration: 10ms
    instances:
      x:
        baseConfig: fast
  circuitbreaker:
    configs:
      default:
        slidingWindowSize: 20
        minimumNumberOfCalls: 20
      strict:
        failureRateThreshold: 10
    instances:
      x:
        baseConfig: strict
`)
	require.NoError(t, err)
	r := c.Retries.Instances["x"]
	assert.Equal(t, []any{5, 10 * time.Millisecond}, []any{r.MaxAttempts, r.WaitDuration}, "default beneath fast")
	cb := c.CircuitBreakers.Instances["x"]
	assert.Equal(t, []any{0, 0, float32(10)}, []any{cb.SlidingWindowSize, cb.MinimumNumberOfCalls, cb.FailureRateThreshold},
		"the breaker's base alone: Resilience4j's defaults for the rest")
}
