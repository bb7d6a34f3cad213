package leveeotel_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveeotel"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

// harness is a registry published through a Metrics on an SDK provider with a manual reader.
type harness struct {
	reg    *registry.Registry
	reader *sdkmetric.ManualReader
	m      *leveeotel.Metrics
}

func newHarness(t testing.TB, readerOpts ...sdkmetric.ManualReaderOption) *harness {
	t.Helper()
	reader := sdkmetric.NewManualReader(readerOpts...)
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	reg := registry.New()
	m, err := leveeotel.New(reg, leveeotel.WithMeterProvider(mp))
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	return &harness{reg: reg, reader: reader, m: m}
}

// collect reads every metric of the leveeotel scope, by name; it fails unless the scope is
// the only one and carries ScopeName and Version().
func (h *harness) collect(t *testing.T) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, h.reader.Collect(context.Background(), &rm))
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		require.Equal(t, leveeotel.ScopeName, sm.Scope.Name)
		require.Equal(t, leveeotel.Version(), sm.Scope.Version)
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

func gaugeInt(points ...metricdata.DataPoint[int64]) metricdata.Gauge[int64] {
	return metricdata.Gauge[int64]{DataPoints: points}
}

func gaugeFloat(points ...metricdata.DataPoint[float64]) metricdata.Gauge[float64] {
	return metricdata.Gauge[float64]{DataPoints: points}
}

func counter(points ...metricdata.DataPoint[int64]) metricdata.Sum[int64] {
	return metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true, DataPoints: points}
}

// addEveryPattern registers one instance of each pattern named "a" and records one failed
// call on the breaker, so that every instrument has a data point.
func addEveryPattern(t *testing.T, h *harness) {
	t.Helper()
	cb, err := circuitbreaker.New("a", circuitbreaker.Config{})
	require.NoError(t, err)
	require.NoError(t, h.reg.AddCircuitBreaker(cb))
	p, err := cb.Acquire()
	require.NoError(t, err)
	p.OnError(errGateway)
	require.NoError(t, cb.TransitionToForcedOpenState())
	require.NoError(t, cb.TransitionToOpenState())
	_, err = cb.Acquire()
	require.ErrorIs(t, err, circuitbreaker.ErrCallNotPermitted)
	rt, err := retry.New("a", retry.Config{})
	require.NoError(t, err)
	require.NoError(t, h.reg.AddRetry(rt))
	bh, err := bulkhead.New("a", bulkhead.Config{})
	require.NoError(t, err)
	require.NoError(t, h.reg.AddBulkhead(bh))
	rl, err := ratelimiter.New("a", ratelimiter.Config{})
	require.NoError(t, err)
	require.NoError(t, h.reg.AddRateLimiter(rl))
	wp, err := async.NewWorkerPool("a", async.WorkerPoolConfig{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, wp.Close()) })
	require.NoError(t, h.reg.AddWorkerPool(wp))
	tl, err := timelimiter.New("a", timelimiter.Config{})
	require.NoError(t, err)
	require.NoError(t, h.reg.AddTimeLimiter(tl))
}

func nan() float64 { return math.NaN() }
func inf() float64 { return math.Inf(1) }

func fmtFloats(b []float64) string { return fmt.Sprint(b) }
