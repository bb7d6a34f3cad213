package leveeconfig_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/leveeconfig"
	"github.com/levee-go/levee/registry"
)

func TestLoadErrorsNameFileLineAndPath(t *testing.T) {
	_, err := load(t, `server:
  port: 8080
resilience4j:
  circuitbreaker:
    instances:
      payment:
        slidingWindowSize: ten
        slidingWindowType: SLIDING
        sliding-window-size: 10
        ignoreExceptions:
          - demo.r4j.Unknown
        waitDurationInOpenState: 3 seconds
        recordFailurePredicate: demo.r4j.RecordFailurePredicate
  retry:
    backends:
      payment: {}
    instances:
      payment:
        maxAttempts: [3]
        enableExponentialBackoff: yes
        exponentialBackoffMultiplier: two
        retryExceptions:
        bogus: 1
  bulkhead:
    retryAspectOrder: 1
  scheduled:
    executor: {maxPoolSize: 4}
  bogus: {}
`)
	require.Error(t, err)
	assert.Equal(t, `app.yml:7: resilience4j.circuitbreaker.instances.payment.slidingWindowSize: "ten" is not an integer: must be at least 1
app.yml:8: resilience4j.circuitbreaker.instances.payment.slidingWindowType: must be COUNT_BASED or TIME_BASED, got "SLIDING"
app.yml:9: resilience4j.circuitbreaker.instances.payment.sliding-window-size: set twice (first on line 7)
app.yml:11: resilience4j.circuitbreaker.instances.payment.ignoreExceptions[0]: unknown exception class "demo.r4j.Unknown": map it in Options.Errors to a Go error (a sentinel, matched with errors.Is) or to levee.ErrorType[*T]() (a type, matched with errors.As), write a built-in class (java.io.IOException, java.net.ConnectException, ...: see the package documentation), or skip it with ignoreClassBindingExceptions: true
app.yml:12: resilience4j.circuitbreaker.instances.payment.waitDurationInOpenState: invalid duration "3 seconds": use 100ms, 3s, PT3S or milliseconds
app.yml:13: resilience4j.circuitbreaker.instances.payment.recordFailurePredicate: names a Java class, which levee cannot load; set the Go function with registry.InstanceConfig.Tune
app.yml:15: resilience4j.retry.backends: Resilience4j 1's name for instances, removed in 2: use instances
app.yml:19: resilience4j.retry.instances.payment.maxAttempts: must be a single value, got a list
app.yml:20: resilience4j.retry.instances.payment.enableExponentialBackoff: "yes" is not true or false
app.yml:21: resilience4j.retry.instances.payment.exponentialBackoffMultiplier: "two" is not a number
app.yml:22: resilience4j.retry.instances.payment.retryExceptions: no value
app.yml:23: resilience4j.retry.instances.payment.bogus: unknown key of retry
app.yml:25: resilience4j.bulkhead.retryAspectOrder: unknown key: bulkhead takes configs, instances, tags and bulkheadAspectOrder
app.yml:27: resilience4j.scheduled.executor.maxPoolSize: unknown key: scheduled.executor takes corePoolSize and contextPropagators
app.yml:28: resilience4j.bogus: unknown key: levee reads circuitbreaker, retry, bulkhead, thread-pool-bulkhead, ratelimiter, timelimiter`, err.Error())

	var first *leveeconfig.Error
	require.ErrorAs(t, err, &first)
	assert.Equal(t, leveeconfig.Source{File: "app.yml", Line: 7}, first.Source)
	assert.Equal(t, "resilience4j.circuitbreaker.instances.payment.slidingWindowSize", first.Path)
}

func TestLoadErrorsOfNewOnAnInstance(t *testing.T) {
	_, err := load(t, instance("thread-pool-bulkhead", `coreThreadPoolSize: 4
        maxThreadPoolSize: 2`))
	assert.EqualError(t, err, "app.yml:5: resilience4j.thread-pool-bulkhead.instances.x.coreThreadPoolSize: "+
		"must be <= maxThreadPoolSize (2), got 4 (maxThreadPoolSize: app.yml:6)")
}

func TestLoadErrorsOfSyntaxAndShape(t *testing.T) {
	_, err := load(t, "resilience4j:\n  retry:\n    instances: x: y\n")
	assert.EqualError(t, err, "app.yml:3: mapping values are not allowed in this context")

	_, err = load(t, "resilience4j: 3\n")
	assert.EqualError(t, err, `app.yml:1: resilience4j: must be a mapping of keys, got the value "3"`)

	_, err = load(t, "resilience4j: {}\n---\nspring.config.activate.on-profile: prod & eu | us\nresilience4j: {}\n")
	assert.EqualError(t, err, `app.yml:3: spring.config.activate.on-profile: profile expression "prod & eu | us" is malformed, `+
		`as Spring reads it: write names joined by & or by | (parentheses to mix them), each maybe with !`)

	_, err = leveeconfig.Load(filepath.Join(t.TempDir(), "missing.yml"), leveeconfig.Options{})
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestNilErrorInTheTableIsRefused(t *testing.T) {
	_, err := leveeconfig.Parse("app.yml", []byte(instance("retry", "retryExceptions: [demo.X]")),
		leveeconfig.Options{Errors: map[string]error{"demo.X": nil}, Environ: []string{}})
	assert.EqualError(t, err, `app.yml:5: resilience4j.retry.instances.x.retryExceptions[0]: exception class "demo.X" is mapped to a nil error in Options.Errors`)
}

func TestEmptyFileAndOtherKeys(t *testing.T) {
	for _, yml := range []string{"", "# nothing\n", "server:\n  port: 8080\n", "resilience:\n  circuitbreaker: {}\n"} {
		c, err := load(t, yml)
		require.NoError(t, err, yml)
		assert.Empty(t, c.Names(registry.CircuitBreaker))
		require.Len(t, c.Warnings, 1, yml)
		assert.Equal(t, "app.yml: no resilience4j section: the file configures no instance", c.Warnings[0].String())
		assert.Equal(t, leveeconfig.Source{File: "app.yml"}, c.Warnings[0].Source)
	}
	c, err := load(t, "resilience4j:\n")
	require.NoError(t, err)
	assert.Empty(t, c.Names(registry.CircuitBreaker))
	assert.Empty(t, c.Warnings, "an empty section is a section")
}

func TestJSONFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "application.json")
	require.NoError(t, os.WriteFile(path, []byte(`{
  "resilience4j": {
    "circuitbreaker": {
      "instances": {
        "payment": {
          "slidingWindowSize": 10,
          "waitDurationInOpenState": "PT3S",
          "ignoreExceptions": ["demo.r4j.InvalidOrderException"]
        }
      }
    },
    "retry": {
      "instances": {
        "payment": {"maxAttempts": 0}
      }
    }
  }
}`), 0o600))
	_, err := leveeconfig.Load(path, leveeconfig.Options{Errors: paymentErrors, Environ: []string{}})
	assert.EqualError(t, err, path+":14: resilience4j.retry.instances.payment.maxAttempts: must be at least 1, got 0")

	require.NoError(t, os.WriteFile(path, []byte(`{"resilience4j": {"circuitbreaker": {"instances": {"payment": {
  "slidingWindowSize": 10, "waitDurationInOpenState": "PT3S"}}}}}`), 0o600))
	c, err := leveeconfig.Load(path, leveeconfig.Options{Errors: paymentErrors, Environ: []string{}})
	require.NoError(t, err)
	assert.Equal(t, 10, c.CircuitBreakers.Instances["payment"].SlidingWindowSize)
	assert.Equal(t, "3s", c.CircuitBreakers.Instances["payment"].WaitDurationInOpenState.String())
}

func TestErrorsAreJoinedErrors(t *testing.T) {
	_, err := load(t, instance("retry", "maxAttempts: 0\n        waitDuration: x"))
	var joined interface{ Unwrap() []error }
	require.ErrorAs(t, err, &joined)
	require.Len(t, joined.Unwrap(), 2)
	for _, e := range joined.Unwrap() {
		var le *leveeconfig.Error
		assert.True(t, errors.As(e, &le))
	}
}
