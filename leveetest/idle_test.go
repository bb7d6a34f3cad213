package leveetest_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveetest"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

func newPatterns(t *testing.T) levee.Patterns {
	t.Helper()
	ps, err := levee.NewPatterns("dep", levee.Configs{
		Retry:          &retry.Config{MaxAttempts: 2, WaitDuration: time.Second},
		CircuitBreaker: &circuitbreaker.Config{PermittedNumberOfCallsInHalfOpenState: 3},
		RateLimiter:    &ratelimiter.Config{LimitForPeriod: 1, LimitRefreshPeriod: time.Minute, TimeoutDuration: time.Hour},
		TimeLimiter:    &timelimiter.Config{TimeoutDuration: time.Second},
		Bulkhead:       &bulkhead.Config{MaxConcurrentCalls: 1, MaxWaitDuration: time.Hour},
	})
	require.NoError(t, err)
	return ps
}

func TestVerifyIdleAfterCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ps := newPatterns(t)
		p := levee.DefaultPipeline[int](ps, nil)
		stub := leveetest.NewStub(leveetest.First(1, leveetest.Fail[int](errDown), leveetest.OK(5)))
		v, err := p.Execute(context.Background(), stub.Call)
		require.NoError(t, err)
		assert.Equal(t, 5, v)
		assert.Equal(t, int64(2), stub.Invocations())
		assert.True(t, leveetest.VerifyIdle(t, ps))
		assert.True(t, leveetest.VerifyIdle(t, levee.Patterns{}))
	})
}

func TestVerifyIdleBulkheadHeldAndWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ps := newPatterns(t)
		stub := leveetest.NewStub(leveetest.Hang[int]())
		ctx, cancel := context.WithCancel(context.Background())
		for range 2 {
			go func() { _, _ = bulkhead.Execute(ctx, ps.Bulkhead, stub.Call) }()
		}
		synctest.Wait()
		f := &fakeTB{TB: t}
		assert.False(t, leveetest.VerifyIdle(f, levee.Patterns{Bulkhead: ps.Bulkhead}))
		assert.Equal(t, []string{
			`leveetest: bulkhead "dep" holds 1 permit(s): 0 of 1 available`,
			`leveetest: bulkhead "dep" has 1 waiting call(s)`,
		}, f.errors)
		cancel()
		synctest.Wait()
		assert.Equal(t, int64(1), stub.Invocations())
		assert.True(t, leveetest.VerifyIdle(t, ps))
	})
}

func TestVerifyIdleHalfOpenProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ps := newPatterns(t)
		cb := ps.CircuitBreaker
		leveetest.ForceState(t, cb, circuitbreaker.HalfOpen)
		events := leveetest.Record(t, cb.Subscribe)

		// Idle: all 3 probes free, and checking publishes nothing.
		assert.True(t, leveetest.VerifyIdle(t, ps))
		assert.Equal(t, 0, events.Len())

		// One probe recorded, one held: 2 should be free, 1 is.
		_, err := circuitbreaker.Execute(context.Background(), cb, leveetest.NewStub(leveetest.OK(1)).Call)
		require.NoError(t, err)
		leaked, err := cb.Acquire()
		require.NoError(t, err)
		f := &fakeTB{TB: t}
		assert.False(t, leveetest.VerifyIdle(f, ps))
		assert.Equal(t, []string{`leveetest: circuit breaker "dep" holds 1 HALF_OPEN probe permit(s): 1 of 2 free`}, f.errors)

		leaked.Release()
		assert.True(t, leveetest.VerifyIdle(t, ps))
		assert.Equal(t, circuitbreaker.HalfOpen, cb.State())
		assert.Equal(t, 1, cb.Metrics().NumberOfBufferedCalls)
		require.NoError(t, cb.TransitionToDisabledState())
	})
}

func TestVerifyIdleRateLimiterWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ps := newPatterns(t)
		stub := leveetest.NewStub(leveetest.OK(1))
		_, err := ratelimiter.Execute(context.Background(), ps.RateLimiter, stub.Call)
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() {
			_, err := ratelimiter.Execute(context.Background(), ps.RateLimiter, stub.Call)
			done <- err
		}()
		synctest.Wait()
		f := &fakeTB{TB: t}
		assert.False(t, leveetest.VerifyIdle(f, ps))
		assert.Equal(t, []string{`leveetest: rate limiter "dep" has 1 waiting call(s)`}, f.errors)
		require.NoError(t, <-done)
		assert.Equal(t, int64(2), stub.Invocations())
		assert.True(t, leveetest.VerifyIdle(t, ps))
	})
}

func TestVerifyIdleTimeLimiterAbandoned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ps := newPatterns(t)
		stub := leveetest.NewStub(leveetest.IgnoreCtx(5*time.Second, leveetest.OK(1)))
		start := time.Now()
		_, err := timelimiter.Execute(context.Background(), ps.TimeLimiter, stub.Call)
		assert.ErrorIs(t, err, timelimiter.ErrTimeout)
		assert.Equal(t, time.Second, time.Since(start))
		f := &fakeTB{TB: t}
		assert.False(t, leveetest.VerifyIdle(f, ps))
		assert.Equal(t, []string{`leveetest: time limiter "dep" has 1 abandoned call(s) still running`}, f.errors)
		assert.Equal(t, int64(1), stub.Running())

		time.Sleep(4 * time.Second)
		synctest.Wait()
		assert.Equal(t, int64(0), stub.Running())
		assert.Equal(t, int64(1), stub.Cancelled())
		assert.True(t, leveetest.VerifyIdle(t, ps))
	})
}

func TestVerifyIdleWorkerPool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pool, err := async.NewWorkerPool("pool", async.WorkerPoolConfig{CoreThreadPoolSize: 1, MaxThreadPoolSize: 1, QueueCapacity: 2})
		require.NoError(t, err)
		stub := leveetest.NewStub(leveetest.Slow(time.Second, leveetest.OK(1)))
		var futures []*async.Future[int]
		for range 3 {
			fut, err := async.Submit(context.Background(), pool, nil, stub.Call)
			require.NoError(t, err)
			futures = append(futures, fut)
		}
		synctest.Wait()
		f := &fakeTB{TB: t}
		assert.False(t, leveetest.VerifyIdle(f, levee.Patterns{}, nil, pool))
		assert.Equal(t, []string{`leveetest: worker pool "pool" has 1 running and 2 queued task(s)`}, f.errors)
		for _, fut := range futures {
			v, err := fut.Get(context.Background())
			require.NoError(t, err)
			assert.Equal(t, 1, v)
		}
		synctest.Wait()
		assert.True(t, leveetest.VerifyIdle(t, levee.Patterns{}, pool))
		assert.Equal(t, int64(1), stub.MaxConcurrent())
		require.NoError(t, pool.Shutdown(context.Background()))
	})
}
