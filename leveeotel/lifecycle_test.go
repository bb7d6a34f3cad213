package leveeotel_test

import (
	"context"
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveeotel"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/retry"
)

// names returns, for instrument metric, the sum of its data points' values (counts for a
// histogram) by their name attribute.
func names(t *testing.T, got map[string]metricdata.Metrics, metric string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	m, ok := got[metric]
	if !ok {
		return out
	}
	name := func(s attribute.Set) string {
		v, _ := s.Value("name")
		return v.AsString()
	}
	switch d := m.Data.(type) {
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			out[name(p.Attributes)] += p.Value
		}
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			out[name(p.Attributes)] += float64(p.Value)
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			out[name(p.Attributes)] += float64(p.Count)
		}
	default:
		t.Fatalf("%s: unexpected aggregation %T", metric, m.Data)
	}
	return out
}

func newBreaker(t *testing.T, name string) *circuitbreaker.CircuitBreaker {
	t.Helper()
	cb, err := circuitbreaker.New(name, circuitbreaker.Config{})
	require.NoError(t, err)
	return cb
}

// failAndRefuse records one failed call and one refusal on cb: it closes cb, records the
// failure, then opens it and asks again.
func failAndRefuse(t *testing.T, cb *circuitbreaker.CircuitBreaker) {
	t.Helper()
	require.NoError(t, cb.TransitionToClosedState())
	p, err := cb.Acquire()
	require.NoError(t, err)
	p.OnError(errGateway)
	require.NoError(t, cb.TransitionToOpenState())
	_, err = cb.Acquire()
	require.ErrorIs(t, err, circuitbreaker.ErrCallNotPermitted)
}

const (
	rateMetric   = "resilience4j.circuitbreaker.failure.rate"
	callsMetric  = "resilience4j.circuitbreaker.calls"
	refuseMetric = "resilience4j.circuitbreaker.not.permitted.calls"
)

// Instances registered before New, added after it, replaced and removed: each is observed and
// subscribed to exactly while it is in the registry.
func TestInstancesAddedAndRemovedLater(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { require.NoError(t, mp.Shutdown(context.Background())) }()
	reg := registry.New()
	before := newBreaker(t, "before")
	require.NoError(t, reg.AddCircuitBreaker(before))
	m, err := leveeotel.New(reg, leveeotel.WithMeterProvider(mp))
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Close()) }()
	h := &harness{reg: reg, reader: reader, m: m}

	after := newBreaker(t, "after")
	require.NoError(t, reg.AddCircuitBreaker(after))
	failAndRefuse(t, before)
	failAndRefuse(t, after)
	got := h.collect(t)
	assert.Equal(t, map[string]float64{"before": -1, "after": -1}, names(t, got, rateMetric))
	assert.Equal(t, map[string]float64{"before": 1, "after": 1}, names(t, got, callsMetric))
	assert.Equal(t, map[string]float64{"before": 1, "after": 1}, names(t, got, refuseMetric))

	// Removed: no more gauges or counters, no more calls recorded (the histogram keeps its last
	// cumulative value, as every synchronous instrument).
	_, ok := reg.RemoveCircuitBreaker("before")
	require.True(t, ok)
	failAndRefuse(t, before)
	failAndRefuse(t, after)
	got = h.collect(t)
	assert.Equal(t, map[string]float64{"after": -1}, names(t, got, rateMetric))
	assert.Equal(t, map[string]float64{"before": 1, "after": 2}, names(t, got, callsMetric))
	assert.Equal(t, map[string]float64{"after": 2}, names(t, got, refuseMetric))

	// Replaced: the new instance is subscribed to, the old one no longer.
	replacement := newBreaker(t, "after")
	old, replaced, err := reg.ReplaceCircuitBreaker(replacement)
	require.NoError(t, err)
	require.True(t, replaced)
	require.Same(t, after, old)
	failAndRefuse(t, after)
	failAndRefuse(t, replacement)
	failAndRefuse(t, replacement)
	got = h.collect(t)
	assert.Equal(t, map[string]float64{"before": 1, "after": 4}, names(t, got, callsMetric))
	assert.Equal(t, map[string]float64{"after": 2}, names(t, got, refuseMetric),
		"the replacement's refusals, counted from its attachment")

	// Added again: counted from 0 again.
	require.NoError(t, reg.AddCircuitBreaker(before))
	failAndRefuse(t, before)
	got = h.collect(t)
	assert.Equal(t, map[string]float64{"before": 1, "after": 2}, names(t, got, refuseMetric))
	assert.Equal(t, map[string]float64{"before": 2, "after": 4}, names(t, got, callsMetric))

	// Replaced by itself: still subscribed to once, its count kept.
	_, replaced, err = reg.ReplaceCircuitBreaker(before)
	require.NoError(t, err)
	require.True(t, replaced)
	failAndRefuse(t, before)
	got = h.collect(t)
	assert.Equal(t, map[string]float64{"before": 2, "after": 2}, names(t, got, refuseMetric))
	assert.Equal(t, map[string]float64{"before": 3, "after": 4}, names(t, got, callsMetric))
}

// Close unregisters the callback and every subscription: with delta temporality, a collection
// after Close has no data point at all, however many calls follow.
func TestCloseStopsEverything(t *testing.T) {
	h := newHarness(t, sdkmetric.WithTemporalitySelector(func(sdkmetric.InstrumentKind) metricdata.Temporality {
		return metricdata.DeltaTemporality
	}))
	cb := newBreaker(t, "gateway")
	require.NoError(t, h.reg.AddCircuitBreaker(cb))
	failAndRefuse(t, cb)
	got := h.collect(t)
	assert.Equal(t, map[string]float64{"gateway": 1}, names(t, got, callsMetric))
	assert.Equal(t, map[string]float64{"gateway": 1}, names(t, got, refuseMetric))

	require.NoError(t, h.m.Close())
	require.NoError(t, h.m.Close(), "a second Close does nothing")
	failAndRefuse(t, cb)
	other := newBreaker(t, "other")
	require.NoError(t, h.reg.AddCircuitBreaker(other))
	failAndRefuse(t, other)
	assert.Empty(t, h.collect(t))
}

// Tags become attributes; a tag named like one of this package's attributes is left out, and
// tags set after the instance was added reach the next recorded call.
func TestTags(t *testing.T) {
	h := newHarness(t)
	cb := newBreaker(t, "gateway")
	require.NoError(t, h.reg.AddCircuitBreaker(cb))
	failAndRefuse(t, cb)
	require.NoError(t, h.reg.SetTags(registry.CircuitBreaker, "gateway",
		map[string]string{"team": "checkout", "name": "other", "kind": "x", "state": "y"}))
	failAndRefuse(t, cb)

	got := h.collect(t)
	hist := got[callsMetric].Data.(metricdata.Histogram[float64])
	var sets []string
	for _, p := range hist.DataPoints {
		sets = append(sets, p.Attributes.Encoded(attribute.DefaultEncoder()))
	}
	assert.ElementsMatch(t, []string{"kind=failed,name=gateway", "kind=failed,name=gateway,team=checkout"}, sets)
	rate := got[rateMetric].Data.(metricdata.Gauge[float64])
	require.Len(t, rate.DataPoints, 1)
	assert.Equal(t, "name=gateway,team=checkout", rate.DataPoints[0].Attributes.Encoded(attribute.DefaultEncoder()))
}

// The scope is the package's import path, with Version().
func TestScope(t *testing.T) {
	assert.Equal(t, reflect.TypeFor[leveeotel.Metrics]().PkgPath(), leveeotel.ScopeName)
	assert.Regexp(t, `^\d+\.\d+\.\d+$`, leveeotel.Version())
	h := newHarness(t)
	addEveryPattern(t, h)
	var rm metricdata.ResourceMetrics
	require.NoError(t, h.reader.Collect(context.Background(), &rm))
	require.Len(t, rm.ScopeMetrics, 1)
	assert.Equal(t, leveeotel.ScopeName, rm.ScopeMetrics[0].Scope.Name)
	assert.Equal(t, leveeotel.Version(), rm.ScopeMetrics[0].Scope.Version)
	assert.Len(t, rm.ScopeMetrics[0].Metrics, 20)
}

// Without WithMeterProvider the global provider is used.
func TestGlobalMeterProvider(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { require.NoError(t, mp.Shutdown(context.Background())) }()
	prev := otel.GetMeterProvider()
	otel.SetMeterProvider(mp)
	defer otel.SetMeterProvider(prev)

	reg := registry.New()
	rt, err := retry.New("payment", retry.Config{})
	require.NoError(t, err)
	require.NoError(t, reg.AddRetry(rt))
	m, err := leveeotel.New(reg, leveeotel.WithMeterProvider(nil))
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Close()) }()

	got := (&harness{reg: reg, reader: reader, m: m}).collect(t)
	assert.Equal(t, map[string]float64{"payment": 0}, names(t, got, "resilience4j.retry.calls"))
}

func TestNewRefusesInvalidArguments(t *testing.T) {
	_, err := leveeotel.New(nil)
	assert.EqualError(t, err, "leveeotel: nil *registry.Registry")
	for _, b := range [][]float64{{}, {1, 1}, {2, 1}, {0.1, nan()}, {inf()}} {
		_, err = leveeotel.New(registry.New(), leveeotel.WithBucketBoundaries(b...))
		assert.EqualError(t, err, "leveeotel: BucketBoundaries must be one or more finite numbers of seconds in strictly increasing order, got "+fmtFloats(b))
	}
}

// WithBucketBoundaries replaces the default boundaries; DefaultBucketBoundaries returns a
// fresh slice each time.
func TestBucketBoundaries(t *testing.T) {
	d := leveeotel.DefaultBucketBoundaries()
	d[0] = 99
	assert.Equal(t, 0.005, leveeotel.DefaultBucketBoundaries()[0])

	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { require.NoError(t, mp.Shutdown(context.Background())) }()
	reg := registry.New()
	cb := newBreaker(t, "gateway")
	require.NoError(t, reg.AddCircuitBreaker(cb))
	m, err := leveeotel.New(reg, leveeotel.WithMeterProvider(mp), leveeotel.WithBucketBoundaries(0.5, 1))
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Close()) }()
	failAndRefuse(t, cb)
	got := (&harness{reg: reg, reader: reader, m: m}).collect(t)
	hist := got[callsMetric].Data.(metricdata.Histogram[float64])
	require.Len(t, hist.DataPoints, 1)
	assert.Equal(t, []float64{0.5, 1}, hist.DataPoints[0].Bounds)
	assert.Equal(t, []uint64{1, 0, 0}, hist.DataPoints[0].BucketCounts)
}

// Once a breaker has tags, a change of them reaches its histogram within a second (they are
// read again at most once a second), and its gauges at the next collection.
func TestTagsChangedLater(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		cb := newBreaker(t, "gateway")
		require.NoError(t, h.reg.AddCircuitBreaker(cb))
		require.NoError(t, h.reg.SetTags(registry.CircuitBreaker, "gateway", map[string]string{"zone": "a"}))
		call := func() {
			_, _ = circuitbreaker.Execute(context.Background(), cb, func(context.Context) (int, error) { return 1, nil })
		}
		call()
		require.NoError(t, h.reg.SetTags(registry.CircuitBreaker, "gateway", map[string]string{"zone": "b"}))
		call()
		time.Sleep(time.Second)
		call()

		got := h.collect(t)
		counts := map[string]uint64{}
		for _, p := range got[callsMetric].Data.(metricdata.Histogram[float64]).DataPoints {
			counts[p.Attributes.Encoded(attribute.DefaultEncoder())] = p.Count
		}
		assert.Equal(t, map[string]uint64{"kind=successful,name=gateway,zone=a": 2, "kind=successful,name=gateway,zone=b": 1}, counts)
		rate := got[rateMetric].Data.(metricdata.Gauge[float64])
		require.Len(t, rate.DataPoints, 1)
		assert.Equal(t, "name=gateway,zone=b", rate.DataPoints[0].Attributes.Encoded(attribute.DefaultEncoder()))
	})
}

// With a Metrics attached, a call costs an event and a histogram record, and no allocation,
// whether the breaker has tags or not.
func TestAttachedCallAllocatesNothing(t *testing.T) {
	h := newHarness(t)
	cb := newBreaker(t, "gateway")
	require.NoError(t, h.reg.AddCircuitBreaker(cb))
	call := func(context.Context) (int, error) { return 1, nil }
	ctx := context.Background()
	_, _ = circuitbreaker.Execute(ctx, cb, call) // the histogram's first point
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = circuitbreaker.Execute(ctx, cb, call) }), "untagged")
	require.NoError(t, h.reg.SetTags(registry.CircuitBreaker, "gateway", map[string]string{"zone": "a"}))
	_, _ = circuitbreaker.Execute(ctx, cb, call)
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = circuitbreaker.Execute(ctx, cb, call) }), "tagged")
	// 2 calls, and 101 for each AllocsPerRun (one to warm up).
	assert.Equal(t, map[string]float64{"gateway": 204}, names(t, h.collect(t), callsMetric))
}
