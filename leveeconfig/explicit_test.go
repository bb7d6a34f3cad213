package leveeconfig_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveeconfig"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

// load parses a YAML text named app.yml with the given environment.
func load(t *testing.T, yml string, env ...string) (*leveeconfig.Config, error) {
	t.Helper()
	if env == nil {
		env = []string{}
	}
	return leveeconfig.Parse("app.yml", []byte(yml), leveeconfig.Options{Errors: paymentErrors, Environ: env})
}

// instance renders "resilience4j.<section>.instances.x" with one key, or none when key is "".
func instance(section, key string) string {
	if key == "" {
		return fmt.Sprintf("resilience4j:\n  %s:\n    instances:\n      x:\n", section)
	}
	return fmt.Sprintf("resilience4j:\n  %s:\n    instances:\n      x:\n        %s\n", section, key)
}

// TestExplicitValuesWhereZeroMeansTheDefaultInGo checks, for every key whose 0 in a file
// means something other than the zero of the Go field, the present key and the absent one.
func TestExplicitValuesWhereZeroMeansTheDefaultInGo(t *testing.T) {
	for _, tc := range []struct {
		section, key string
		get          func(*leveeconfig.Config) any
		present      any
		absent       any
	}{
		{"retry", "waitDuration: 0", func(c *leveeconfig.Config) any { return c.Retries.Instances["x"].WaitDuration }, retry.NoWait, time.Duration(0)},
		{"ratelimiter", "timeoutDuration: 0", func(c *leveeconfig.Config) any { return c.RateLimiters.Instances["x"].TimeoutDuration }, ratelimiter.NoWait, time.Duration(0)},
		{"bulkhead", "maxConcurrentCalls: 0", func(c *leveeconfig.Config) any { return c.Bulkheads.Instances["x"].MaxConcurrentCalls }, bulkhead.NoConcurrentCalls, 0},
		{"thread-pool-bulkhead", "queueCapacity: 0", func(c *leveeconfig.Config) any { return c.WorkerPools.Instances["x"].QueueCapacity }, async.NoQueue, 0},
		{"thread-pool-bulkhead", "keepAliveDuration: 0", func(c *leveeconfig.Config) any { return c.WorkerPools.Instances["x"].KeepAliveDuration }, async.NoKeepAlive, time.Duration(0)},
		// Where 0 means the same in both, it stays 0.
		{"bulkhead", "maxWaitDuration: 0", func(c *leveeconfig.Config) any { return c.Bulkheads.Instances["x"].MaxWaitDuration }, time.Duration(0), time.Duration(0)},
		{"circuitbreaker", "maxWaitDurationInHalfOpenState: 0", func(c *leveeconfig.Config) any {
			return c.CircuitBreakers.Instances["x"].MaxWaitDurationInHalfOpenState
		}, time.Duration(0), time.Duration(0)},
		// Booleans whose Go field says the opposite.
		{"bulkhead", "fairCallHandlingStrategyEnabled: false", func(c *leveeconfig.Config) any { return c.Bulkheads.Instances["x"].DisableFairCallHandling }, true, false},
		{"timelimiter", "cancelRunningFuture: false", func(c *leveeconfig.Config) any { return c.TimeLimiters.Instances["x"].DisableCancelRunningFuture }, true, false},
	} {
		t.Run(tc.section+"/"+tc.key, func(t *testing.T) {
			c, err := load(t, instance(tc.section, tc.key))
			require.NoError(t, err)
			assert.Equal(t, tc.present, tc.get(c), "present")
			c, err = load(t, instance(tc.section, ""))
			require.NoError(t, err)
			assert.Equal(t, tc.absent, tc.get(c), "absent")
		})
	}
}

// TestExplicitZeroRefusedWhereResilience4jRefusesIt checks every key whose 0 Resilience4j
// refuses: a 0 is an error, never the default in disguise.
func TestExplicitZeroRefusedWhereResilience4jRefusesIt(t *testing.T) {
	for _, tc := range []struct{ section, key, msg string }{
		{"circuitbreaker", "failureRateThreshold", "must be in (0, 100], got 0"},
		{"circuitbreaker", "slowCallRateThreshold", "must be in (0, 100], got 0"},
		{"circuitbreaker", "slowCallDurationThreshold", "must be at least 1ns, got 0"},
		{"circuitbreaker", "slidingWindowSize", "must be at least 1, got 0"},
		{"circuitbreaker", "minimumNumberOfCalls", "must be at least 1, got 0"},
		{"circuitbreaker", "waitDurationInOpenState", "must be at least 1ms, got 0"},
		{"circuitbreaker", "permittedNumberOfCallsInHalfOpenState", "must be at least 1, got 0"},
		{"retry", "maxAttempts", "must be at least 1, got 0"},
		{"ratelimiter", "limitForPeriod", "must be at least 1, got 0"},
		{"ratelimiter", "limitRefreshPeriod", "must be at least 1ns, got 0"},
		{"thread-pool-bulkhead", "coreThreadPoolSize", "must be at least 1, got 0"},
		{"thread-pool-bulkhead", "maxThreadPoolSize", "must be at least 1, got 0"},
		{"timelimiter", "timeoutDuration", "must be at least 1ns, got 0"},
	} {
		t.Run(tc.section+"/"+tc.key, func(t *testing.T) {
			_, err := load(t, instance(tc.section, tc.key+": 0"))
			require.Error(t, err)
			assert.EqualError(t, err, fmt.Sprintf("app.yml:5: resilience4j.%s.instances.x.%s: %s", tc.section, tc.key, tc.msg))
		})
	}
}

// A file's zero works as it says on the instances built from it.
func TestExplicitZeroBehaviour(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, err := load(t, `
resilience4j:
  retry:
    instances:
      x:
        waitDuration: 0
  bulkhead:
    instances:
      x:
        maxConcurrentCalls: 0
  ratelimiter:
    instances:
      x:
        limitForPeriod: 1
        limitRefreshPeriod: 1h
        timeoutDuration: 0
`)
		require.NoError(t, err)
		reg, err := c.Registry()
		require.NoError(t, err)

		rt, _ := reg.Retry("x")
		start := time.Now()
		attempts := 0
		_, err = retry.Execute(context.Background(), rt, func(context.Context) (int, error) {
			attempts++
			return 0, errors.New("down")
		})
		require.Error(t, err)
		assert.Equal(t, 3, attempts)
		assert.Equal(t, time.Duration(0), time.Since(start), "no wait between attempts")

		bh, _ := reg.Bulkhead("x")
		_, err = bulkhead.Execute(context.Background(), bh, func(context.Context) (int, error) { return 1, nil })
		assert.ErrorIs(t, err, bulkhead.ErrBulkheadFull, "maxConcurrentCalls: 0 admits no call")

		rl, _ := reg.RateLimiter("x")
		require.NoError(t, rl.AcquirePermission(context.Background(), 1))
		err = rl.AcquirePermission(context.Background(), 1)
		assert.ErrorIs(t, err, ratelimiter.ErrRequestNotPermitted, "timeoutDuration: 0 does not wait an hour")
		assert.Equal(t, time.Duration(0), time.Since(start))
	})
}

func TestEveryKeyOfEveryPattern(t *testing.T) {
	c, err := load(t, `
resilience4j:
  circuitbreaker:
    instances:
      x:
        failureRateThreshold: 25.5
        slowCallRateThreshold: 90
        slowCallDurationThreshold: 2s
        slidingWindowType: TIME_BASED
        slidingWindowSize: 30
        minimumNumberOfCalls: 7
        waitDurationInOpenState: PT10S
        permittedNumberOfCallsInHalfOpenState: 4
        maxWaitDurationInHalfOpenState: 5000
        automaticTransitionFromOpenToHalfOpenEnabled: true
        recordExceptions: [demo.r4j.GatewayException, io.github.resilience4j.bulkhead.BulkheadFullException]
        ignoreExceptions: demo.r4j.InvalidOrderException
  retry:
    instances:
      x:
        maxAttempts: 5
        waitDuration: 1s
        failAfterMaxAttempts: true
        retryExceptions: [io.github.resilience4j.circuitbreaker.CallNotPermittedException, java.util.concurrent.TimeoutException]
  bulkhead:
    instances:
      x:
        maxConcurrentCalls: 8
        maxWaitDuration: 250ms
        fairCallHandlingStrategyEnabled: true
  thread-pool-bulkhead:
    instances:
      x:
        coreThreadPoolSize: 2
        maxThreadPoolSize: 4
        queueCapacity: 10
        keepAliveDuration: 1m
  ratelimiter:
    instances:
      x:
        limitForPeriod: 10
        limitRefreshPeriod: 1s
        timeoutDuration: 100ms
  timelimiter:
    instances:
      x:
        timeoutDuration: 2s
        cancelRunningFuture: true
`)
	require.NoError(t, err)
	cb := c.CircuitBreakers.Instances["x"]
	assert.Equal(t, circuitbreaker.Config{
		FailureRateThreshold:                         25.5,
		SlowCallRateThreshold:                        90,
		SlowCallDurationThreshold:                    2 * time.Second,
		SlidingWindowType:                            circuitbreaker.TimeBased,
		SlidingWindowSize:                            30,
		MinimumNumberOfCalls:                         7,
		WaitDurationInOpenState:                      10 * time.Second,
		PermittedNumberOfCallsInHalfOpenState:        4,
		MaxWaitDurationInHalfOpenState:               5 * time.Second,
		AutomaticTransitionFromOpenToHalfOpenEnabled: true,
		RecordErrors:                                 []error{paymentErrors["demo.r4j.GatewayException"]},
		RecordRejections:                             []error{bulkhead.ErrBulkheadFull},
		IgnoreErrors:                                 []error{paymentErrors["demo.r4j.InvalidOrderException"]},
	}, cb)
	assert.Equal(t, retry.Config{
		MaxAttempts:          5,
		WaitDuration:         time.Second,
		RetryErrors:          []error{timelimiter.ErrTimeout, context.DeadlineExceeded, os.ErrDeadlineExceeded},
		RetryRejections:      []error{circuitbreaker.ErrCallNotPermitted},
		FailAfterMaxAttempts: true,
	}, c.Retries.Instances["x"])
	assert.Equal(t, bulkhead.Config{MaxConcurrentCalls: 8, MaxWaitDuration: 250 * time.Millisecond}, c.Bulkheads.Instances["x"])
	assert.Equal(t, async.WorkerPoolConfig{CoreThreadPoolSize: 2, MaxThreadPoolSize: 4, QueueCapacity: 10, KeepAliveDuration: time.Minute},
		c.WorkerPools.Instances["x"])
	assert.Equal(t, ratelimiter.Config{LimitForPeriod: 10, LimitRefreshPeriod: time.Second, TimeoutDuration: 100 * time.Millisecond},
		c.RateLimiters.Instances["x"])
	assert.Equal(t, timelimiter.Config{TimeoutDuration: 2 * time.Second}, c.TimeLimiters.Instances["x"])
	assert.Empty(t, c.Warnings)
}

func TestBreakerWaitIntervalFromBackoffKeys(t *testing.T) {
	c, err := load(t, instance("circuitbreaker", `waitDurationInOpenState: 1s
        enableExponentialBackoff: true
        exponentialBackoffMultiplier: 3
        exponentialMaxWaitDurationInOpenState: 5s`))
	require.NoError(t, err)
	cb := c.CircuitBreakers.Instances["x"]
	assert.Equal(t, time.Duration(0), cb.WaitDurationInOpenState)
	require.NotNil(t, cb.WaitIntervalFunctionInOpenState)
	assert.Equal(t, []time.Duration{time.Second, 3 * time.Second, 5 * time.Second},
		[]time.Duration{cb.WaitIntervalFunctionInOpenState(1), cb.WaitIntervalFunctionInOpenState(2), cb.WaitIntervalFunctionInOpenState(3)})
}

func TestBackoffKeysWithoutTheirSwitchAreWarnings(t *testing.T) {
	c, err := load(t, instance("retry", `exponentialBackoffMultiplier: 3
        randomizedWaitFactor: 0.2`))
	require.NoError(t, err)
	require.Len(t, c.Warnings, 2)
	assert.Equal(t, "app.yml:5: resilience4j.retry.instances.x.exponentialBackoffMultiplier: ignored without enableExponentialBackoff: true, as in Resilience4j", c.Warnings[0].String())
	assert.Equal(t, "app.yml:6: resilience4j.retry.instances.x.randomizedWaitFactor: ignored without enableRandomizedWait: true, as in Resilience4j", c.Warnings[1].String())
}

func TestRetryBackoffNeedsAWait(t *testing.T) {
	_, err := load(t, instance("retry", `waitDuration: 0
        enableExponentialBackoff: true`))
	assert.EqualError(t, err, "app.yml:5: resilience4j.retry.instances.x.waitDuration: must be more than 0 with enableExponentialBackoff: true, got 0")
}
