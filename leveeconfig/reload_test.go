package leveeconfig_test

import (
	"context"
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
	"github.com/levee-go/levee/leveeconfig"
	"github.com/levee-go/levee/ratelimiter"
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

	next, err := load(t, after)
	require.NoError(t, err)
	un, err := c.Reload(reg, next)
	require.NoError(t, err)

	var got []string
	for _, u := range un {
		got = append(got, u.String())
	}
	assert.Equal(t, []string{
		"circuitbreaker payment slidingWindowSize 10 -> 20: a CircuitBreaker's config is fixed at New (levee has no changeConfig for it); " +
			"Remove the instance and get it again to apply it, losing its state and the pipelines' hold on it",
		"retry payment maxAttempts 3 -> 5: a Retry's config is fixed at New, and the pipelines hold the instance; " +
			"Remove it and get it again, then rebuild the pipelines",
		"ratelimiter payment limitRefreshPeriod 1s -> 2s: the cycle of a running RateLimiter cannot change, as in Resilience4j " +
			"(only limitForPeriod and timeoutDuration can)",
		"timelimiter payment: no longer in the file: the instance stays registered with its config",
	}, got, "retryAspectOrder: 1 keeps Retry outermost: the order did not change")

	assert.Equal(t, 10, rl.Config().LimitForPeriod)
	assert.Equal(t, 100*time.Millisecond, rl.Config().TimeoutDuration)
	assert.Equal(t, time.Second, rl.Config().LimitRefreshPeriod)
	assert.Equal(t, bulkhead.Config{MaxConcurrentCalls: 4, MaxWaitDuration: 50 * time.Millisecond}, bh.Config())
	assert.Equal(t, 10, cb.Config().SlidingWindowSize)
	again, _ := reg.FindCircuitBreaker("payment")
	assert.Same(t, cb, again)

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
	assert.Len(t, un, 4) // cb, retry, limitRefreshPeriod, and stock no longer in the file

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

	// One bad value among good changes: nothing changes.
	bad := []byte(after + "  timelimiter:\n    instances:\n      payment:\n        timeoutDuration: 0\n")
	require.NoError(t, os.WriteFile(path, bad, 0o600))
	got, un, err := c.ReloadFile(reg, path, leveeconfig.Options{Environ: []string{}})
	assert.EqualError(t, err, path+":27: resilience4j.timelimiter.instances.payment.timeoutDuration: must be at least 1ns, got 0")
	assert.Same(t, c, got)
	assert.Nil(t, un)
	assert.Equal(t, 5, rl.Config().LimitForPeriod)
	assert.Equal(t, bulkhead.Config{MaxConcurrentCalls: 2}, bh.Config())
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
}

const hammerBefore = `resilience4j:
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

// TestReloadWhileCalling reloads back and forth while 64 goroutines call through the
// bulkhead and the rate limiter: no call is admitted beyond the bulkhead's larger size, and
// every permit comes back.
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
	})
}
