package registry_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

type cbInstance = registry.InstanceConfig[circuitbreaker.Config]

func TestGetOrCreateWithoutConfigsUsesTheDefaults(t *testing.T) {
	reg := registry.New()
	cb, err := reg.CircuitBreaker("payment")
	require.NoError(t, err)
	assert.Equal(t, "payment", cb.Name())
	assert.Equal(t, 100, cb.Config().SlidingWindowSize)
	again, err := reg.CircuitBreaker("payment")
	require.NoError(t, err)
	assert.Same(t, cb, again)
	found, ok := reg.FindCircuitBreaker("payment")
	assert.True(t, ok)
	assert.Same(t, cb, found)
}

func TestGetOrCreateFromDefaultBaseAndTune(t *testing.T) {
	reg := registry.New()
	reg.SetCircuitBreakerConfig(registry.DefaultConfigName, circuitbreaker.Config{SlidingWindowSize: 10, MinimumNumberOfCalls: 10})
	reg.SetCircuitBreakerConfig("shared", circuitbreaker.Config{SlidingWindowSize: 20, MinimumNumberOfCalls: 7})
	reg.ConfigureCircuitBreaker("payment", cbInstance{
		BaseConfig: "shared",
		Tune:       func(c *circuitbreaker.Config) { c.MinimumNumberOfCalls = 5 },
		Tags:       map[string]string{"team": "checkout"},
	})
	reg.ConfigureCircuitBreaker("stock", cbInstance{Tune: func(c *circuitbreaker.Config) { c.FailureRateThreshold = 25 }})

	cfg, err := reg.CircuitBreakerConfigFor("payment")
	require.NoError(t, err)
	assert.Equal(t, 20, cfg.SlidingWindowSize)
	assert.Equal(t, 5, cfg.MinimumNumberOfCalls)

	payment, err := reg.CircuitBreaker("payment")
	require.NoError(t, err)
	assert.Equal(t, 20, payment.Config().SlidingWindowSize)
	assert.Equal(t, 5, payment.Config().MinimumNumberOfCalls)
	assert.Equal(t, map[string]string{"team": "checkout"}, reg.Tags(registry.CircuitBreaker, "payment"))

	stock, err := reg.CircuitBreaker("stock")
	require.NoError(t, err)
	assert.Equal(t, 10, stock.Config().SlidingWindowSize, "no BaseConfig: the default")
	assert.Equal(t, float32(25), stock.Config().FailureRateThreshold)

	other, err := reg.CircuitBreaker("other")
	require.NoError(t, err)
	assert.Equal(t, 10, other.Config().SlidingWindowSize)
	assert.Nil(t, reg.Tags(registry.CircuitBreaker, "other"))

	shared, ok := reg.CircuitBreakerConfig("shared")
	assert.True(t, ok)
	assert.Equal(t, 20, shared.SlidingWindowSize)
	_, ok = reg.CircuitBreakerConfig("missing")
	assert.False(t, ok)

	// Configs change what is created later, never an existing instance.
	reg.SetCircuitBreakerConfig("shared", circuitbreaker.Config{SlidingWindowSize: 30})
	again, err := reg.CircuitBreaker("payment")
	require.NoError(t, err)
	assert.Same(t, payment, again)
	assert.Equal(t, 20, again.Config().SlidingWindowSize)
}

func TestGetOrCreateErrorsRegisterNothing(t *testing.T) {
	reg := registry.New()
	var events []registry.Event
	reg.Subscribe(func(e registry.Event) { events = append(events, e) })

	reg.ConfigureCircuitBreaker("a", cbInstance{BaseConfig: "missing"})
	_, err := reg.CircuitBreaker("a")
	require.ErrorIs(t, err, registry.ErrConfigNotFound)
	assert.EqualError(t, err, `registry: no shared config with that name: circuitbreaker "missing" (base of "a")`)

	reg.ConfigureCircuitBreaker("b", cbInstance{Tune: func(c *circuitbreaker.Config) { c.SlidingWindowSize = -1 }})
	_, err = reg.CircuitBreaker("b")
	assert.EqualError(t, err, `registry: creating circuitbreaker "b": circuitbreaker: SlidingWindowSize must be in [1, 1048576], got -1`)

	reg.ConfigureCircuitBreaker("c", cbInstance{Tune: func(*circuitbreaker.Config) { panic("boom") }})
	_, err = reg.CircuitBreaker("c")
	assert.EqualError(t, err, `registry: Tune of circuitbreaker "c" panicked: boom`)
	_, err = reg.CircuitBreakerConfigFor("c")
	assert.EqualError(t, err, `registry: Tune of circuitbreaker "c" panicked: boom`)

	assert.Empty(t, reg.CircuitBreakers())
	assert.Empty(t, events)
}

func TestGetOrCreateOfEveryPattern(t *testing.T) {
	reg := registry.New()
	reg.SetRetryConfig(registry.DefaultConfigName, retry.Config{MaxAttempts: 5})
	reg.SetBulkheadConfig(registry.DefaultConfigName, bulkhead.Config{MaxConcurrentCalls: 3})
	reg.SetWorkerPoolConfig(registry.DefaultConfigName, async.WorkerPoolConfig{CoreThreadPoolSize: 1, MaxThreadPoolSize: 2, QueueCapacity: 4})
	reg.SetRateLimiterConfig(registry.DefaultConfigName, ratelimiter.Config{LimitForPeriod: 7})
	reg.SetTimeLimiterConfig(registry.DefaultConfigName, timelimiter.Config{TimeoutDuration: 3 * time.Second})
	reg.ConfigureRetry("x", registry.InstanceConfig[retry.Config]{Tune: func(c *retry.Config) { c.MaxAttempts++ }})
	reg.ConfigureBulkhead("x", registry.InstanceConfig[bulkhead.Config]{Tune: func(c *bulkhead.Config) { c.MaxWaitDuration = time.Second }})
	reg.ConfigureWorkerPool("x", registry.InstanceConfig[async.WorkerPoolConfig]{Tune: func(c *async.WorkerPoolConfig) { c.QueueCapacity = 9 }})
	reg.ConfigureRateLimiter("x", registry.InstanceConfig[ratelimiter.Config]{Tune: func(c *ratelimiter.Config) { c.TimeoutDuration = ratelimiter.NoWait }})
	reg.ConfigureTimeLimiter("x", registry.InstanceConfig[timelimiter.Config]{Tune: func(c *timelimiter.Config) { c.DisableCancelRunningFuture = true }})

	rt, err := reg.Retry("x")
	require.NoError(t, err)
	assert.Equal(t, 6, rt.Config().MaxAttempts)
	bh, err := reg.Bulkhead("x")
	require.NoError(t, err)
	assert.Equal(t, bulkhead.Config{MaxConcurrentCalls: 3, MaxWaitDuration: time.Second}, bh.Config())
	wp, err := reg.WorkerPool("x")
	require.NoError(t, err)
	defer wp.Close()
	assert.Equal(t, async.WorkerPoolConfig{CoreThreadPoolSize: 1, MaxThreadPoolSize: 2, QueueCapacity: 9, KeepAliveDuration: 20 * time.Millisecond}, wp.Config())
	rl, err := reg.RateLimiter("x")
	require.NoError(t, err)
	assert.Equal(t, 7, rl.Config().LimitForPeriod)
	assert.Equal(t, ratelimiter.NoWait, rl.Config().TimeoutDuration)
	tl, err := reg.TimeLimiter("x")
	require.NoError(t, err)
	assert.Equal(t, timelimiter.Config{TimeoutDuration: 3 * time.Second, DisableCancelRunningFuture: true}, tl.Config())

	for _, name := range []string{"x", "y"} {
		_, err = reg.Retry(name)
		require.NoError(t, err)
	}
	assert.Equal(t, "registry{retry: x, y; bulkhead: x; workerpool: x; ratelimiter: x; timelimiter: x}", reg.String())
}

func TestConcurrentGetOrCreateMakesOneInstance(t *testing.T) {
	reg := registry.New()
	var mu sync.Mutex
	var added []registry.Event
	reg.Subscribe(func(e registry.Event) {
		mu.Lock()
		defer mu.Unlock()
		added = append(added, e)
	})
	var tunes sync.WaitGroup
	calls := 0
	reg.ConfigureCircuitBreaker("payment", cbInstance{Tune: func(c *circuitbreaker.Config) {
		calls++ // under the registry's lock: -race reports it if not
		c.SlidingWindowSize = 10
	}})
	const n = 64
	got := make([]*circuitbreaker.CircuitBreaker, n)
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		tunes.Go(func() {
			<-start
			got[i], errs[i] = reg.CircuitBreaker("payment")
		})
	}
	close(start)
	tunes.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		assert.Same(t, got[0], got[i])
	}
	assert.Equal(t, 1, calls)
	assert.Equal(t, 10, got[0].Config().SlidingWindowSize)
	require.Len(t, added, 1)
	assert.Equal(t, registry.EntryAdded, added[0].Type)
	assert.Same(t, got[0], added[0].Instance)
}
