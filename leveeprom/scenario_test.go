package leveeprom_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveeprom"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

var errGateway = errors.New("gateway 503")

// gatewayBreaker is the scenario's breaker: COUNT_BASED window 5, minimum 5 calls, threshold 50 %.
func gatewayBreaker(t *testing.T, name string) *circuitbreaker.CircuitBreaker {
	t.Helper()
	cb, err := circuitbreaker.New(name, circuitbreaker.Config{
		SlidingWindowType:    circuitbreaker.CountBased,
		SlidingWindowSize:    5,
		MinimumNumberOfCalls: 5,
		FailureRateThreshold: 50,
	})
	require.NoError(t, err)
	return cb
}

// failing is a call to the failing gateway that takes 10ms (of the bubble's fake clock).
func failing(ctx context.Context) (string, error) {
	time.Sleep(10 * time.Millisecond)
	return "", errGateway
}

// populate fills reg with one instance of every pattern, each used as the golden file says,
// inside a synctest bubble so that the call durations are exact.
func populate(t *testing.T, reg *registry.Registry) {
	t.Helper()
	ctx := context.Background()

	cb := gatewayBreaker(t, "payment")
	require.NoError(t, reg.AddCircuitBreaker(cb))
	require.NoError(t, reg.SetTags(registry.CircuitBreaker, "payment", map[string]string{"team": "checkout", "ignored": "x"}))
	var notPermitted, failed int
	for range 8 {
		_, err := circuitbreaker.Execute(ctx, cb, failing)
		switch {
		case errors.Is(err, circuitbreaker.ErrCallNotPermitted):
			notPermitted++
		case errors.Is(err, errGateway):
			failed++
		}
	}
	require.Equal(t, circuitbreaker.Open, cb.State())
	require.Equal(t, 5, failed)
	require.Equal(t, 3, notPermitted)

	ok := gatewayBreaker(t, "stock")
	require.NoError(t, reg.AddCircuitBreaker(ok))
	_, err := circuitbreaker.Execute(ctx, ok, func(context.Context) (int, error) {
		time.Sleep(250 * time.Millisecond)
		return 1, nil
	})
	require.NoError(t, err)

	rt, err := retry.New("payment", retry.Config{MaxAttempts: 3, WaitDuration: 100 * time.Millisecond})
	require.NoError(t, err)
	require.NoError(t, reg.AddRetry(rt))
	_, err = retry.Execute(ctx, rt, func(context.Context) (int, error) { return 1, nil })
	require.NoError(t, err)
	_, err = retry.Execute(ctx, rt, failing)
	require.ErrorIs(t, err, errGateway)

	bh, err := bulkhead.New("payment", bulkhead.Config{MaxConcurrentCalls: 3})
	require.NoError(t, err)
	require.NoError(t, reg.AddBulkhead(bh))

	tl, err := timelimiter.New("payment", timelimiter.Config{TimeoutDuration: time.Second})
	require.NoError(t, err)
	require.NoError(t, reg.AddTimeLimiter(tl))
	_, err = timelimiter.Execute(ctx, tl, func(context.Context) (int, error) { return 1, nil })
	require.NoError(t, err)
	_, err = timelimiter.Execute(ctx, tl, failing)
	require.ErrorIs(t, err, errGateway)
	_, err = timelimiter.Execute(ctx, tl, func(ctx context.Context) (int, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	})
	require.ErrorIs(t, err, timelimiter.ErrTimeout)

	wp, err := async.NewWorkerPool("payment", async.WorkerPoolConfig{CoreThreadPoolSize: 1, MaxThreadPoolSize: 2, QueueCapacity: 4})
	require.NoError(t, err)
	t.Cleanup(func() { _ = wp.Close() })
	require.NoError(t, reg.AddWorkerPool(wp))

	// last, so that no cycle passes before the scrape
	rl, err := ratelimiter.New("payment", ratelimiter.Config{LimitForPeriod: 10, LimitRefreshPeriod: time.Second})
	require.NoError(t, err)
	require.NoError(t, reg.AddRateLimiter(rl))
	require.NoError(t, rl.AcquirePermission(ctx, 2))
}

// The scenario users know, scraped: 8 calls to a failing gateway open the breaker after the
// fifth; the five failures took 10ms each, the last three calls were not permitted.
func TestScenarioGolden(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := registry.New()
		c := leveeprom.NewCollector(reg, leveeprom.WithTagKeys("team"))
		defer c.Close()
		populate(t, reg)
		synctest.Wait()

		golden, err := os.Open("testdata/scenario.prom")
		require.NoError(t, err)
		defer golden.Close()
		require.NoError(t, testutil.CollectAndCompare(c, golden))
		assert.Equal(t, 2, c.Attached())
	})
}

func TestLint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := registry.New()
		c := leveeprom.NewCollector(reg, leveeprom.WithTagKeys("team", "zone"))
		defer c.Close()
		populate(t, reg)
		// Resilience4j's names for two gauges of the thread-pool bulkhead end in _count, which
		// the linter reserves for histograms and summaries; they are kept for compatibility.
		problems, err := testutil.CollectAndLint(c)
		require.NoError(t, err)
		const reserved = `non-histogram and non-summary metrics should not have "_count" suffix`
		assert.Equal(t, []promlint.Problem{
			{Metric: leveeprom.BulkheadActiveThreadCount, Text: reserved},
			{Metric: leveeprom.BulkheadAvailableThreadCount, Text: reserved},
		}, problems)
		var others []string
		for _, name := range leveeprom.Families() {
			if name != leveeprom.BulkheadActiveThreadCount && name != leveeprom.BulkheadAvailableThreadCount {
				others = append(others, name)
			}
		}
		problems, err = testutil.CollectAndLint(c, others...)
		require.NoError(t, err)
		assert.Empty(t, problems)
		assert.Equal(t, 56, testutil.CollectAndCount(c))
	})
}

// The breaker's calls summary is attached to breakers built before the collector too.
func TestBreakerBeforeCollector(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := registry.New()
		cb := gatewayBreaker(t, "payment")
		require.NoError(t, reg.AddCircuitBreaker(cb))
		c := leveeprom.NewCollector(reg)
		defer c.Close()
		for range 6 {
			_, _ = circuitbreaker.Execute(context.Background(), cb, failing)
		}
		assert.Equal(t, 1, c.Attached())
		name := map[string]string{"name": "payment"}
		assert.Equal(t, 1.0, value(t, c, leveeprom.CircuitBreakerNotPermittedCalls, name))
		assert.Equal(t, 100.0, value(t, c, leveeprom.CircuitBreakerFailureRate, name))
		assert.Equal(t, 5.0, value(t, c, leveeprom.CircuitBreakerCalls, map[string]string{"name": "payment", "kind": "failed"}))
	})
}

// value gathers c and returns the value of the series of family name whose labels include
// labels (a counter's or gauge's value, a summary's count), failing unless exactly one matches.
func value(t *testing.T, c prometheus.Collector, name string, labels map[string]string) float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	defer reg.Unregister(c)
	mfs, err := reg.Gather()
	require.NoError(t, err)
	var found []float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, lp := range m.GetLabel() {
				have[lp.GetName()] = lp.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue metrics
				}
			}
			switch {
			case m.Gauge != nil:
				found = append(found, m.GetGauge().GetValue())
			case m.Counter != nil:
				found = append(found, m.GetCounter().GetValue())
			case m.Summary != nil:
				found = append(found, float64(m.GetSummary().GetSampleCount()))
			}
		}
	}
	require.Len(t, found, 1, "series of %s with %v", name, labels)
	return found[0]
}
