package leveeotel_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

// Retry, bulkhead, rate limiter and time limiter figures come from their Metrics snapshots.
func TestOtherPatterns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		ctx := context.Background()

		rt, err := retry.New("payment", retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait, IgnoreErrors: []error{errIgnored}})
		require.NoError(t, err)
		require.NoError(t, h.reg.AddRetry(rt))
		attempts := 0
		flaky := func(context.Context) (int, error) { // fails every other attempt
			attempts++
			if attempts%2 == 1 {
				return 0, errGateway
			}
			return 1, nil
		}
		_, _ = retry.Execute(ctx, rt, flaky) // fails, then succeeds: successful with retry
		_, _ = retry.Execute(ctx, rt, func(context.Context) (int, error) { return 1, nil })
		_, _ = retry.Execute(ctx, rt, func(context.Context) (int, error) { return 1, nil })
		_, _ = retry.Execute(ctx, rt, func(context.Context) (int, error) { return 0, errGateway }) // 3 attempts
		_, _ = retry.Execute(ctx, rt, func(context.Context) (int, error) { return 0, errIgnored })

		bh, err := bulkhead.New("inventory", bulkhead.Config{MaxConcurrentCalls: 4})
		require.NoError(t, err)
		require.NoError(t, h.reg.AddBulkhead(bh))
		require.True(t, bh.TryAcquire())
		defer bh.Release()

		rl, err := ratelimiter.New("search", ratelimiter.Config{LimitForPeriod: 10, LimitRefreshPeriod: time.Minute})
		require.NoError(t, err)
		require.NoError(t, h.reg.AddRateLimiter(rl))
		require.NoError(t, rl.AcquirePermission(ctx, 3))

		tl, err := timelimiter.New("quote", timelimiter.Config{TimeoutDuration: time.Second})
		require.NoError(t, err)
		require.NoError(t, h.reg.AddTimeLimiter(tl))
		sleep := func(d time.Duration, err error) func(context.Context) (int, error) {
			return func(ctx context.Context) (int, error) {
				select {
				case <-time.After(d):
					return 1, err
				case <-ctx.Done():
					return 0, ctx.Err()
				}
			}
		}
		_, _ = timelimiter.Execute(ctx, tl, sleep(10*time.Millisecond, nil))
		_, _ = timelimiter.Execute(ctx, tl, sleep(20*time.Millisecond, nil))
		_, _ = timelimiter.Execute(ctx, tl, sleep(10*time.Millisecond, errGateway))
		_, err = timelimiter.Execute(ctx, tl, sleep(time.Hour, nil))
		require.ErrorIs(t, err, timelimiter.ErrTimeout)
		synctest.Wait() // the abandoned call sees its cancelled context and returns

		got := h.collect(t)
		set := func(name string, kv ...attribute.KeyValue) attribute.Set {
			return attribute.NewSet(append(kv, attribute.String("name", name))...)
		}
		point := func(name, kind string, v int64) metricdata.DataPoint[int64] {
			return metricdata.DataPoint[int64]{Attributes: set(name, attribute.String("kind", kind)), Value: v}
		}
		want := map[string]metricdata.Aggregation{
			"resilience4j.retry.calls": counter(
				point("payment", "successful_without_retry", 2),
				point("payment", "successful_with_retry", 1),
				point("payment", "failed_without_retry", 1),
				point("payment", "failed_with_retry", 1)),
			"resilience4j.bulkhead.available.concurrent.calls": gaugeInt(
				metricdata.DataPoint[int64]{Attributes: set("inventory"), Value: 3}),
			"resilience4j.bulkhead.max.allowed.concurrent.calls": gaugeInt(
				metricdata.DataPoint[int64]{Attributes: set("inventory"), Value: 4}),
			"resilience4j.ratelimiter.available.permissions": gaugeInt(
				metricdata.DataPoint[int64]{Attributes: set("search"), Value: 7}),
			"resilience4j.ratelimiter.waiting_threads": gaugeInt(
				metricdata.DataPoint[int64]{Attributes: set("search"), Value: 0}),
			"resilience4j.timelimiter.calls": counter(
				point("quote", "successful", 2),
				point("quote", "failed", 1),
				point("quote", "timeout", 1)),
		}
		assert.Len(t, got, len(want), "instruments with data points")
		for name, w := range want {
			m, ok := got[name]
			if assert.True(t, ok, name) {
				metricdatatest.AssertAggregationsEqual(t, w, m.Data, metricdatatest.IgnoreTimestamp())
			}
		}
	})
}

var errIgnored = errors.New("not found")

// The units and descriptions the Prometheus exporter turns into suffixes and HELP: rates
// without a unit (no _percent or _ratio), the histogram in seconds, counts as annotations.
func TestUnits(t *testing.T) {
	h := newHarness(t)
	addEveryPattern(t, h)
	got := h.collect(t)
	want := map[string]string{
		"resilience4j.circuitbreaker.state":                  "",
		"resilience4j.circuitbreaker.calls":                  "s",
		"resilience4j.circuitbreaker.not.permitted.calls":    "{call}",
		"resilience4j.circuitbreaker.buffered.calls":         "{call}",
		"resilience4j.circuitbreaker.slow.calls":             "{call}",
		"resilience4j.circuitbreaker.failure.rate":           "",
		"resilience4j.circuitbreaker.slow.call.rate":         "",
		"resilience4j.retry.calls":                           "{call}",
		"resilience4j.bulkhead.available.concurrent.calls":   "{call}",
		"resilience4j.bulkhead.max.allowed.concurrent.calls": "{call}",
		"resilience4j.bulkhead.queue.depth":                  "{task}",
		"resilience4j.bulkhead.queue.capacity":               "{task}",
		"resilience4j.bulkhead.thread.pool.size":             "{goroutine}",
		"resilience4j.bulkhead.max.thread.pool.size":         "{goroutine}",
		"resilience4j.bulkhead.core.thread.pool.size":        "{goroutine}",
		"resilience4j.bulkhead.active.thread.count":          "{goroutine}",
		"resilience4j.bulkhead.available.thread.count":       "{goroutine}",
		"resilience4j.ratelimiter.available.permissions":     "{permission}",
		"resilience4j.ratelimiter.waiting_threads":           "{goroutine}",
		"resilience4j.timelimiter.calls":                     "{call}",
	}
	units := map[string]string{}
	for name, m := range got {
		units[name] = m.Unit
		assert.NotEmpty(t, m.Description, name)
	}
	assert.Equal(t, want, units)
}

// A worker pool's gauges are Resilience4j's thread-pool bulkhead's. Of three tasks, one runs on
// the core worker and two wait in the queue: a worker above the core size starts only when the
// queue is full, as in Java's ThreadPoolExecutor.
func TestWorkerPool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		pool, err := async.NewWorkerPool("reports", async.WorkerPoolConfig{CoreThreadPoolSize: 1, MaxThreadPoolSize: 2, QueueCapacity: 3})
		require.NoError(t, err)
		defer func() { require.NoError(t, pool.Close()) }()
		require.NoError(t, h.reg.AddWorkerPool(pool))
		release := make(chan struct{})
		task := func(context.Context) (int, error) { <-release; return 1, nil }
		var futures []*async.Future[int]
		for range 3 {
			f, err := async.Submit(context.Background(), pool, nil, task)
			require.NoError(t, err)
			futures = append(futures, f)
			synctest.Wait()
		}

		got := h.collect(t)
		name := attribute.NewSet(attribute.String("name", "reports"))
		want := map[string]int64{
			"resilience4j.bulkhead.queue.depth":            2,
			"resilience4j.bulkhead.queue.capacity":         3,
			"resilience4j.bulkhead.thread.pool.size":       1,
			"resilience4j.bulkhead.max.thread.pool.size":   2,
			"resilience4j.bulkhead.core.thread.pool.size":  1,
			"resilience4j.bulkhead.active.thread.count":    1,
			"resilience4j.bulkhead.available.thread.count": 1,
		}
		for n, v := range want {
			if !metricdatatest.AssertAggregationsEqual(t, gaugeInt(metricdata.DataPoint[int64]{Attributes: name, Value: v}),
				got[n].Data, metricdatatest.IgnoreTimestamp()) {
				t.Log("in", n)
			}
		}
		close(release)
		for _, f := range futures {
			_, err := f.Get(context.Background())
			require.NoError(t, err)
		}
	})
}
