package leveeconfig_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveeconfig"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

const before = `resilience4j:
  circuitbreaker:
    instances:
      payment:
        slidingWindowSize: 10
  retry:
    instances:
      payment:
        maxAttempts: 3
  bulkhead:
    instances:
      payment:
        maxConcurrentCalls: 2
        maxWaitDuration: 0
  ratelimiter:
    instances:
      payment:
        limitForPeriod: 5
        limitRefreshPeriod: 1s
        timeoutDuration: 0
  timelimiter:
    instances:
      payment:
        timeoutDuration: 1s
`

const after = `resilience4j:
  circuitbreaker:
    instances:
      payment:
        slidingWindowSize: 20
  retry:
    retryAspectOrder: 1
    instances:
      payment:
        maxAttempts: 5
  bulkhead:
    instances:
      payment:
        maxConcurrentCalls: 4
        maxWaitDuration: 50ms
  ratelimiter:
    instances:
      payment:
        limitForPeriod: 10
        limitRefreshPeriod: 2s
        timeoutDuration: 100ms
      stock:
        limitForPeriod: 1
`

func TestReloadChangesWhatCanChangeAndReportsTheRest(t *testing.T) {
	c, err := load(t, before)
	require.NoError(t, err)
	reg, err := c.Registry()
	require.NoError(t, err)
	cb, _ := reg.FindCircuitBreaker("payment")
	rl, _ := reg.FindRateLimiter("payment")
	bh, _ := reg.FindBulkhead("payment")
	rt, _ := reg.FindRetry("payment")

	next, err := load(t, after)
	require.NoError(t, err)
	un, err := c.Reload(reg, next)
	require.NoError(t, err)

	var got []string
	for _, u := range un {
		got = append(got, u.String())
	}
	assert.Equal(t, []string{
		"ratelimiter payment limitRefreshPeriod 1s -> 2s: the cycle of a running RateLimiter cannot change, as in Resilience4j " +
			"(only limitForPeriod and timeoutDuration can)",
		"timelimiter payment: no longer in the file: the instance stays registered with its config",
	}, got, "retryAspectOrder: 1 keeps Retry outermost: the order did not change")

	assert.Equal(t, 10, rl.Config().LimitForPeriod)
	assert.Equal(t, 100*time.Millisecond, rl.Config().TimeoutDuration)
	assert.Equal(t, time.Second, rl.Config().LimitRefreshPeriod)
	assert.Equal(t, bulkhead.Config{MaxConcurrentCalls: 4, MaxWaitDuration: 50 * time.Millisecond}, bh.Config())
	assert.Equal(t, 5, rt.Config().MaxAttempts)
	assert.Equal(t, 5, attemptsOf(rt), "a call that starts now makes 5 attempts")
	assert.Equal(t, 20, cb.Config().SlidingWindowSize)
	again, _ := reg.FindCircuitBreaker("payment")
	assert.Same(t, cb, again)
	// The CLOSED period under way keeps its window of 10 (minimumNumberOfCalls 100 is capped
	// by it); the next CLOSED period has the window of 20.
	for range 10 {
		p, err := cb.Acquire()
		require.NoError(t, err)
		p.OnError(errGateway)
	}
	assert.Equal(t, circuitbreaker.Open, cb.State(), "10 failures in the window of 10")
	require.NoError(t, cb.TransitionToClosedState())
	for range 19 {
		p, err := cb.Acquire()
		require.NoError(t, err)
		p.OnError(errGateway)
	}
	assert.Equal(t, circuitbreaker.Closed, cb.State(), "19 calls in the new window of 20: below its minimum")
	assert.Equal(t, float32(-1), cb.Metrics().FailureRate)
	require.NoError(t, cb.TransitionToClosedState())

	stock, ok := reg.FindRateLimiter("stock")
	require.True(t, ok, "an instance new in the file is created")
	assert.Equal(t, 1, stock.Config().LimitForPeriod)

	// The registry's configs follow the new file: an instance made again gets it.
	cfg, err := reg.CircuitBreakerConfigFor("payment")
	require.NoError(t, err)
	assert.Equal(t, 20, cfg.SlidingWindowSize)
	reg.RemoveCircuitBreaker("payment")
	fresh, err := reg.CircuitBreaker("payment")
	require.NoError(t, err)
	assert.Equal(t, 20, fresh.Config().SlidingWindowSize)

	// And back: the absent timeoutDuration is the default 5s, not "no wait".
	un, err = next.Reload(reg, c)
	require.NoError(t, err)
	assert.Equal(t, 5, rl.Config().LimitForPeriod)
	assert.Equal(t, ratelimiter.NoWait, rl.Config().TimeoutDuration)
	assert.Equal(t, bulkhead.Config{MaxConcurrentCalls: 2}, bh.Config())
	assert.Equal(t, 10, fresh.Config().SlidingWindowSize, "the registered instance changes back")
	assert.Equal(t, 20, cb.Config().SlidingWindowSize, "the removed one is no longer the registry's")
	assert.Equal(t, 3, rt.Config().MaxAttempts)
	got = nil
	for _, u := range un {
		got = append(got, u.String())
	}
	assert.Equal(t, []string{
		"ratelimiter payment limitRefreshPeriod 2s -> 1s: the cycle of a running RateLimiter cannot change, as in Resilience4j " +
			"(only limitForPeriod and timeoutDuration can)",
		"ratelimiter stock: no longer in the file: the instance stays registered with its config",
	}, got)

	last, err := load(t, "resilience4j:\n  ratelimiter:\n    instances:\n      payment:\n        limitForPeriod: 3\n        limitRefreshPeriod: 1s\n")
	require.NoError(t, err)
	_, err = c.Reload(reg, last)
	require.NoError(t, err)
	assert.Equal(t, 3, rl.Config().LimitForPeriod)
	assert.Equal(t, 5*time.Second, rl.Config().TimeoutDuration, "timeoutDuration absent: Resilience4j's default")
}

func TestReloadOrderChangeIsReported(t *testing.T) {
	c, err := load(t, before)
	require.NoError(t, err)
	reg, err := c.Registry()
	require.NoError(t, err)
	next, err := load(t, before+"    timeLimiterAspectOrder: 0\n")
	require.NoError(t, err)
	un, err := c.Reload(reg, next)
	require.NoError(t, err)
	require.Len(t, un, 1)
	assert.Equal(t, "aspect order Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(call))))) -> TimeLimiter(Retry(CircuitBreaker(RateLimiter(Bulkhead(call))))): "+
		"pipelines already built keep their order: build them again with Pipeline", un[0].String())
}

func TestReloadFileInvalidChangesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "application.yml")
	require.NoError(t, os.WriteFile(path, []byte(before), 0o600))
	c, err := leveeconfig.Load(path, leveeconfig.Options{Environ: []string{}})
	require.NoError(t, err)
	reg, err := c.Registry()
	require.NoError(t, err)
	rl, _ := reg.FindRateLimiter("payment")
	bh, _ := reg.FindBulkhead("payment")
	cb, _ := reg.FindCircuitBreaker("payment")
	rt, _ := reg.FindRetry("payment")
	tl, _ := reg.FindTimeLimiter("payment")

	// One bad value among good changes: nothing changes.
	bad := []byte(after + "  timelimiter:\n    instances:\n      payment:\n        timeoutDuration: 0\n")
	require.NoError(t, os.WriteFile(path, bad, 0o600))
	got, un, err := c.ReloadFile(reg, path, leveeconfig.Options{Environ: []string{}})
	assert.EqualError(t, err, path+":27: resilience4j.timelimiter.instances.payment.timeoutDuration: must be at least 1ns, got 0")
	assert.Same(t, c, got)
	assert.Nil(t, un)
	assert.Equal(t, 5, rl.Config().LimitForPeriod)
	assert.Equal(t, bulkhead.Config{MaxConcurrentCalls: 2}, bh.Config())
	assert.Equal(t, 10, cb.Config().SlidingWindowSize)
	assert.Equal(t, 3, rt.Config().MaxAttempts)
	assert.Equal(t, timelimiter.Config{TimeoutDuration: time.Second}, tl.Config())
	_, ok := reg.FindRateLimiter("stock")
	assert.False(t, ok)
	cfg, err := reg.BulkheadConfigFor("payment")
	require.NoError(t, err)
	assert.Equal(t, 2, cfg.MaxConcurrentCalls, "the registry's configs are untouched too")

	require.NoError(t, os.WriteFile(path, []byte(after), 0o600))
	got, _, err = c.ReloadFile(reg, path, leveeconfig.Options{Environ: []string{}})
	require.NoError(t, err)
	assert.NotSame(t, c, got)
	assert.Equal(t, 10, rl.Config().LimitForPeriod)
	assert.Equal(t, 20, cb.Config().SlidingWindowSize)
	assert.Equal(t, 5, rt.Config().MaxAttempts)
}

// attemptsOf counts the attempts a call that always fails makes under rt, driving a Context
// by hand (no wait is made).
func attemptsOf(rt *retry.Retry) int {
	c := rt.NewContext()
	n := 1
	for {
		if _, again := c.OnError(errGateway); !again {
			return n
		}
		n++
	}
}

// TestReloadChangesRetryAndTimeLimiter: every retry key and both time limiter keys change
// the running instances, which keep a Logger set in Go.
func TestReloadChangesRetryAndTimeLimiter(t *testing.T) {
	c, err := load(t, `resilience4j:
  retry:
    instances:
      stock:
        maxAttempts: 2
        waitDuration: 100ms
  timelimiter:
    instances:
      stock:
        timeoutDuration: 1s
`)
	require.NoError(t, err)
	reg, err := c.Registry()
	require.NoError(t, err)
	logger := slog.New(slog.DiscardHandler)
	rt, _ := reg.FindRetry("stock")
	cfg := rt.Config()
	cfg.Logger = logger
	require.NoError(t, rt.ChangeConfig(cfg))
	tl, _ := reg.FindTimeLimiter("stock")
	require.NoError(t, tl.ChangeConfig(timelimiter.Config{TimeoutDuration: time.Second, Logger: logger}))

	next, err := load(t, `resilience4j:
  retry:
    instances:
      stock:
        maxAttempts: 4
        enableExponentialBackoff: true
        waitDuration: 100ms
        exponentialBackoffMultiplier: 2
        failAfterMaxAttempts: true
  timelimiter:
    instances:
      stock:
        timeoutDuration: 250ms
        cancelRunningFuture: false
`)
	require.NoError(t, err)
	un, err := c.Reload(reg, next)
	require.NoError(t, err)
	assert.Empty(t, un)

	got := rt.Config()
	assert.Equal(t, 4, got.MaxAttempts)
	assert.True(t, got.FailAfterMaxAttempts)
	require.NotNil(t, got.IntervalFunction)
	assert.Equal(t, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond},
		[]time.Duration{got.IntervalFunction(1), got.IntervalFunction(2), got.IntervalFunction(3)})
	assert.Same(t, logger, got.Logger, "a file cannot set a Logger: the instance keeps its own")
	assert.Equal(t, 4, attemptsOf(rt))
	assert.Equal(t, timelimiter.Config{TimeoutDuration: 250 * time.Millisecond, DisableCancelRunningFuture: true, Logger: logger},
		tl.Config())
}

const hammerBefore = `resilience4j:
  circuitbreaker:
    instances:
      payment:
        slidingWindowSize: 10
        failureRateThreshold: 50
  retry:
    instances:
      payment:
        maxAttempts: 2
        waitDuration: 1ms
  timelimiter:
    instances:
      payment:
        timeoutDuration: 1s
  bulkhead:
    instances:
      payment:
        maxConcurrentCalls: 2
  ratelimiter:
    instances:
      payment:
        limitForPeriod: 1000
        limitRefreshPeriod: 10ms
        timeoutDuration: 0
`

const hammerAfter = `resilience4j:
  circuitbreaker:
    instances:
      payment:
        slidingWindowSize: 20
        failureRateThreshold: 80
  retry:
    instances:
      payment:
        maxAttempts: 3
        waitDuration: 2ms
  timelimiter:
    instances:
      payment:
        timeoutDuration: 2s
        cancelRunningFuture: false
  bulkhead:
    instances:
      payment:
        maxConcurrentCalls: 4
        maxWaitDuration: 5ms
  ratelimiter:
    instances:
      payment:
        limitForPeriod: 2000
        limitRefreshPeriod: 10ms
        timeoutDuration: 100ms
`

// TestReloadWhileCalling reloads back and forth while 64 goroutines call through the whole
// pipeline (retry, circuit breaker, rate limiter, time limiter, bulkhead): no call is admitted
// beyond the bulkhead's larger size, every permit comes back, and each instance ends with the
// config of the last file.
func TestReloadWhileCalling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, err := load(t, hammerBefore)
		require.NoError(t, err)
		next, err := load(t, hammerAfter)
		require.NoError(t, err)
		reg, err := c.Registry()
		require.NoError(t, err)
		p, err := leveeconfig.Pipeline[int](c, reg, "payment", nil)
		require.NoError(t, err)
		bh, _ := reg.FindBulkhead("payment")
		rl, _ := reg.FindRateLimiter("payment")
		cb, _ := reg.FindCircuitBreaker("payment")
		rt, _ := reg.FindRetry("payment")
		tl, _ := reg.FindTimeLimiter("payment")

		var inFlight, maxInFlight, done atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 64 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					_, _ = p.Execute(context.Background(), func(context.Context) (int, error) {
						n := inFlight.Add(1)
						for {
							m := maxInFlight.Load()
							if n <= m || maxInFlight.CompareAndSwap(m, n) {
								break
							}
						}
						time.Sleep(time.Millisecond)
						inFlight.Add(-1)
						done.Add(1)
						return 1, nil
					})
					time.Sleep(time.Millisecond)
				}
			})
		}
		from, to := c, next
		for range 20 {
			time.Sleep(10 * time.Millisecond)
			_, err := from.Reload(reg, to)
			require.NoError(t, err)
			from, to = to, from
		}
		close(stop)
		wg.Wait()

		assert.Equal(t, int64(4), maxInFlight.Load(), "4 at once after a reload, never more")
		assert.Greater(t, done.Load(), int64(100))
		assert.Equal(t, int64(0), inFlight.Load())
		// 20 reloads from "before": back to it.
		assert.Equal(t, bulkhead.Metrics{AvailableConcurrentCalls: 2, MaxAllowedConcurrentCalls: 2}, bh.Metrics())
		assert.Equal(t, ratelimiter.Config{LimitForPeriod: 1000, LimitRefreshPeriod: 10 * time.Millisecond, TimeoutDuration: ratelimiter.NoWait},
			rl.Config())
		assert.Equal(t, 0, rl.Metrics().NumberOfWaitingCalls)
		assert.Equal(t, 10, cb.Config().SlidingWindowSize)
		assert.Equal(t, float32(50), cb.Config().FailureRateThreshold)
		assert.Equal(t, circuitbreaker.Closed, cb.State())
		assert.Equal(t, done.Load(), rt.Metrics().NumberOfSuccessfulCallsWithoutRetryAttempt, "every call that ran succeeded at once")
		assert.Equal(t, retry.Config{MaxAttempts: 2, WaitDuration: time.Millisecond}, rt.Config())
		assert.Equal(t, timelimiter.Config{TimeoutDuration: time.Second}, tl.Config())
		m := tl.Metrics()
		assert.Equal(t, done.Load(), m.NumberOfSuccessfulCalls)
		assert.Zero(t, m.NumberOfTimedOutCalls)
		assert.Zero(t, m.NumberOfAbandonedCalls)
	})
}
