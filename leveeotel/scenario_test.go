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

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveeotel"
	"github.com/levee-go/levee/registry"
)

var errGateway = errors.New("gateway: 503")

// callDuration is how long each call to the failing gateway takes: 2^-6 s, exact in binary, so
// that the histogram's sum is exact.
const callDuration = 15625 * time.Microsecond

// A breaker of a COUNT_BASED window of 5 calls, minimum 5, threshold 50 %, in front of a gateway
// that always fails: of 8 calls the first 5 fail and open it, the last 3 are not permitted.
func TestGatewayScenario(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		cb, err := circuitbreaker.New("gateway", circuitbreaker.Config{
			SlidingWindowType:    circuitbreaker.CountBased,
			SlidingWindowSize:    5,
			MinimumNumberOfCalls: 5,
			FailureRateThreshold: 50,
		})
		require.NoError(t, err)
		require.NoError(t, h.reg.AddCircuitBreaker(cb))
		require.NoError(t, h.reg.SetTags(registry.CircuitBreaker, "gateway", map[string]string{"team": "checkout"}))

		var failed, refused int
		for range 8 {
			_, err := circuitbreaker.Execute(context.Background(), cb, func(context.Context) (int, error) {
				time.Sleep(callDuration)
				return 0, errGateway
			})
			switch {
			case errors.Is(err, errGateway):
				failed++
			case errors.Is(err, circuitbreaker.ErrCallNotPermitted):
				refused++
			}
		}
		require.Equal(t, 5, failed)
		require.Equal(t, 3, refused)

		got := h.collect(t)
		attrs := func(kv ...attribute.KeyValue) attribute.Set {
			return attribute.NewSet(append(kv, attribute.String("name", "gateway"), attribute.String("team", "checkout"))...)
		}
		kind := func(k string) attribute.Set { return attrs(attribute.String("kind", k)) }
		state := func(s string, v int64) metricdata.DataPoint[int64] {
			return metricdata.DataPoint[int64]{Attributes: attrs(attribute.String("state", s)), Value: v}
		}

		want := map[string]metricdata.Aggregation{
			"resilience4j.circuitbreaker.state": gaugeInt(
				state("closed", 0), state("open", 1), state("half_open", 0),
				state("disabled", 0), state("forced_open", 0), state("metrics_only", 0)),
			"resilience4j.circuitbreaker.calls": metricdata.Histogram[float64]{
				Temporality: metricdata.CumulativeTemporality,
				DataPoints: []metricdata.HistogramDataPoint[float64]{{
					Attributes:   kind("failed"),
					Count:        5,
					Bounds:       []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
					BucketCounts: []uint64{0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0},
					Min:          metricdata.NewExtrema(0.015625),
					Max:          metricdata.NewExtrema(0.015625),
					Sum:          0.078125,
				}},
			},
			"resilience4j.circuitbreaker.not.permitted.calls": counter(
				metricdata.DataPoint[int64]{Attributes: kind("not_permitted"), Value: 3}),
			"resilience4j.circuitbreaker.buffered.calls": gaugeInt(
				metricdata.DataPoint[int64]{Attributes: kind("successful"), Value: 0},
				metricdata.DataPoint[int64]{Attributes: kind("failed"), Value: 5}),
			"resilience4j.circuitbreaker.slow.calls": gaugeInt(
				metricdata.DataPoint[int64]{Attributes: kind("successful"), Value: 0},
				metricdata.DataPoint[int64]{Attributes: kind("failed"), Value: 0}),
			"resilience4j.circuitbreaker.failure.rate": gaugeFloat(
				metricdata.DataPoint[float64]{Attributes: attrs(), Value: 100}),
			"resilience4j.circuitbreaker.slow.call.rate": gaugeFloat(
				metricdata.DataPoint[float64]{Attributes: attrs(), Value: 0}),
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

// Before the window holds the minimum number of calls both rates are -1, as Resilience4j's.
func TestRatesBeforeMinimumNumberOfCalls(t *testing.T) {
	h := newHarness(t)
	cb, err := circuitbreaker.New("stock", circuitbreaker.Config{SlidingWindowSize: 5, MinimumNumberOfCalls: 5})
	require.NoError(t, err)
	require.NoError(t, h.reg.AddCircuitBreaker(cb))
	p, err := cb.Acquire()
	require.NoError(t, err)
	p.OnError(errGateway)

	got := h.collect(t)
	name := attribute.NewSet(attribute.String("name", "stock"))
	for _, n := range []string{"resilience4j.circuitbreaker.failure.rate", "resilience4j.circuitbreaker.slow.call.rate"} {
		metricdatatest.AssertAggregationsEqual(t,
			gaugeFloat(metricdata.DataPoint[float64]{Attributes: name, Value: -1}), got[n].Data,
			metricdatatest.IgnoreTimestamp())
	}
}

// Successful, failed and ignored calls each have their kind, with their durations.
func TestCallKinds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		cb, err := circuitbreaker.New("pricing", circuitbreaker.Config{IgnoreErrors: []error{context.DeadlineExceeded}})
		require.NoError(t, err)
		require.NoError(t, h.reg.AddCircuitBreaker(cb))
		run := func(d time.Duration, err error) {
			_, _ = circuitbreaker.Execute(context.Background(), cb, func(context.Context) (int, error) {
				time.Sleep(d)
				return 1, err
			})
		}
		run(250*time.Millisecond, nil)                // bucket (0.1, 0.25]
		run(2*time.Second, nil)                       // bucket (1, 2.5]
		run(500*time.Millisecond, errGateway)         // bucket (0.25, 0.5]
		run(20*time.Second, context.DeadlineExceeded) // above 10

		got := h.collect(t)
		kind := func(k string) attribute.Set {
			return attribute.NewSet(attribute.String("name", "pricing"), attribute.String("kind", k))
		}
		bounds := leveeotel.DefaultBucketBoundaries()
		point := func(k string, buckets []uint64, durations ...float64) metricdata.HistogramDataPoint[float64] {
			p := metricdata.HistogramDataPoint[float64]{Attributes: kind(k), Count: uint64(len(durations)), Bounds: bounds, BucketCounts: buckets}
			p.Min, p.Max = metricdata.NewExtrema(durations[0]), metricdata.NewExtrema(durations[len(durations)-1])
			for _, d := range durations {
				p.Sum += d
			}
			return p
		}
		want := metricdata.Histogram[float64]{
			Temporality: metricdata.CumulativeTemporality,
			DataPoints: []metricdata.HistogramDataPoint[float64]{
				point("successful", []uint64{0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0}, 0.25, 2),
				point("failed", []uint64{0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0}, 0.5),
				point("ignored", []uint64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 20),
			},
		}
		metricdatatest.AssertAggregationsEqual(t, want, got["resilience4j.circuitbreaker.calls"].Data, metricdatatest.IgnoreTimestamp())
		assert.Equal(t, "s", got["resilience4j.circuitbreaker.calls"].Unit)
	})
}
