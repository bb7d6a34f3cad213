package leveeotel_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveeotel"
	"github.com/levee-go/levee/registry"
)

// runCalls makes, through cb, 2 successful calls of 2^-8 s and 2^-5 s (in the first and third
// buckets; durations exact in binary, so that a sum of seconds does not depend on the order
// of its additions), 1 failed call of 2^-6 s and 1 ignored one of 20 s (beyond the last
// bucket), then refuses 1.
func runCalls(t *testing.T, cb *circuitbreaker.CircuitBreaker) {
	t.Helper()
	ctx := context.Background()
	for _, c := range []struct {
		d   time.Duration
		err error
	}{{3906250 * time.Nanosecond, nil}, {31250 * time.Microsecond, nil}, {callDuration, errGateway}, {20 * time.Second, errIgnored}} {
		_, _ = circuitbreaker.Execute(ctx, cb, func(context.Context) (int, error) {
			time.Sleep(c.d)
			return 0, c.err
		})
	}
	require.NoError(t, cb.TransitionToOpenState())
	_, err := cb.Acquire()
	require.ErrorIs(t, err, circuitbreaker.ErrCallNotPermitted)
}

// The producer exports, for the same calls, the counts, buckets and sums of Metrics' own
// histogram, without Min and Max; WithoutCallsHistogram leaves the other instruments as they
// were.
func TestCallsProducerMatchesTheHistogram(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		collect := func(produced bool) map[string]metricdata.Metrics {
			reg := registry.New()
			var readerOpts []sdkmetric.ManualReaderOption
			opts := []leveeotel.Option{}
			if produced {
				readerOpts = append(readerOpts, sdkmetric.WithProducer(leveeotel.NewCallsProducer(reg)))
				opts = append(opts, leveeotel.WithoutCallsHistogram())
			}
			reader := sdkmetric.NewManualReader(readerOpts...)
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
			t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
			m, err := leveeotel.New(reg, append(opts, leveeotel.WithMeterProvider(mp))...)
			require.NoError(t, err)
			t.Cleanup(func() { _ = m.Close() })
			cb, err := circuitbreaker.New("gateway", circuitbreaker.Config{IgnoreErrors: []error{errIgnored}})
			require.NoError(t, err)
			require.NoError(t, reg.AddCircuitBreaker(cb))
			require.NoError(t, reg.SetTags(registry.CircuitBreaker, "gateway", map[string]string{"team": "checkout"}))
			runCalls(t, cb)
			return (&harness{reg: reg, reader: reader, m: m}).collect(t)
		}
		want, got := collect(false), collect(true)
		require.Len(t, got, len(want))
		for name, w := range want {
			if name == "resilience4j.circuitbreaker.calls" {
				continue
			}
			metricdatatest.AssertEqual(t, w, got[name], metricdatatest.IgnoreTimestamp())
		}
		w := want["resilience4j.circuitbreaker.calls"]
		wh := w.Data.(metricdata.Histogram[float64])
		for i := range wh.DataPoints {
			wh.DataPoints[i].Min, wh.DataPoints[i].Max = metricdata.Extrema[float64]{}, metricdata.Extrema[float64]{}
		}
		w.Data = wh
		metricdatatest.AssertEqual(t, w, got["resilience4j.circuitbreaker.calls"], metricdatatest.IgnoreTimestamp())

		kinds := map[string]uint64{}
		for _, p := range got["resilience4j.circuitbreaker.calls"].Data.(metricdata.Histogram[float64]).DataPoints {
			k, _ := p.Attributes.Value("kind")
			kinds[k.AsString()] = p.Count
		}
		assert.Equal(t, map[string]uint64{"successful": 2, "failed": 1, "ignored": 1}, kinds)
	})
}

// The producer's bounds are the breaker's buckets, and a registry without calls, or none,
// produces nothing.
func TestCallsProducerBoundsAndEmpty(t *testing.T) {
	var secs []float64
	for _, b := range circuitbreaker.CallDurationBuckets() {
		secs = append(secs, b.Seconds())
	}
	assert.Equal(t, leveeotel.DefaultBucketBoundaries(), secs)

	reg := registry.New()
	cb, err := circuitbreaker.New("idle", circuitbreaker.Config{})
	require.NoError(t, err)
	require.NoError(t, reg.AddCircuitBreaker(cb))
	sm, err := leveeotel.NewCallsProducer(reg).Produce(context.Background())
	require.NoError(t, err)
	assert.Empty(t, sm)
	sm, err = leveeotel.NewCallsProducer(nil).Produce(context.Background())
	require.NoError(t, err)
	assert.Empty(t, sm)
}

// With WithoutCallsHistogram and the producer, a successful call allocates nothing.
func TestProducedCallAllocatesNothing(t *testing.T) {
	reg := registry.New()
	reader := sdkmetric.NewManualReader(sdkmetric.WithProducer(leveeotel.NewCallsProducer(reg)))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { require.NoError(t, mp.Shutdown(context.Background())) }()
	m, err := leveeotel.New(reg, leveeotel.WithMeterProvider(mp), leveeotel.WithoutCallsHistogram())
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Close()) }()
	cb := newBreaker(t, "gateway")
	require.NoError(t, reg.AddCircuitBreaker(cb))
	ctx := context.Background()
	call := func(context.Context) (int, error) { return 1, nil }
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = circuitbreaker.Execute(ctx, cb, call) }))
	assert.Equal(t, map[string]float64{"gateway": 101}, names(t, (&harness{reg: reg, reader: reader, m: m}).collect(t), callsMetric))
}
