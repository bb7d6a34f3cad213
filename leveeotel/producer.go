package leveeotel

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/registry"
)

// The calls histogram's name and description, Resilience4j's.
const (
	callsName        = "resilience4j.circuitbreaker.calls"
	callsDescription = "Total number of successful calls"
)

// CallsProducer exports the resilience4j.circuitbreaker.calls histogram of the breakers of a
// registry from the figures each breaker keeps itself (circuitbreaker.CircuitBreaker.CallStats),
// read when the SDK collects, rather than from one histogram record per call. It implements the
// OpenTelemetry SDK's metric.Producer: add it to the application's reader, and make the
// Metrics of the same registry create no histogram of its own, so that no call is recorded
// twice:
//
//	reader := sdkmetric.NewPeriodicReader(exporter, sdkmetric.WithProducer(leveeotel.NewCallsProducer(reg)))
//	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
//	m, err := leveeotel.New(reg, leveeotel.WithMeterProvider(provider), leveeotel.WithoutCallsHistogram())
//
// A successful call then costs what it costs unobserved (see "Cost" in the package
// documentation). The histogram has the instrument's name, description, unit (s) and scope,
// and for each breaker and each kind (successful, failed, ignored) that has had a call, one
// cumulative data point with the attributes name, the breaker's tags and kind, as Metrics'
// histogram. It differs from that histogram in these ways, all following from the breaker
// keeping the figures:
//
//   - the bounds are DefaultBucketBoundaries, the buckets the breaker keeps
//     (circuitbreaker.CallDurationBuckets); WithBucketBoundaries and Views do not apply;
//   - the counts are the breaker's since its New, and the start time of every point is when
//     NewCallsProducer ran; only cumulative temporality is produced;
//   - there is no Min or Max (the breaker keeps a decaying maximum, not the extremes since the
//     start);
//   - the attributes are the breaker's tags at the collection, for all its calls;
//   - a breaker removed from the registry is no longer exported;
//   - durations have the precision of the breaker's Metrics (see "Timing" in the
//     circuitbreaker package): a call may be counted up to about 1 ms longer than it took.
//
// Its methods are safe for concurrent use.
type CallsProducer struct {
	reg    *registry.Registry
	start  time.Time
	bounds []float64
}

// NewCallsProducer returns a CallsProducer for the breakers of reg, those added later
// included. A nil reg produces nothing.
func NewCallsProducer(reg *registry.Registry) *CallsProducer {
	return &CallsProducer{reg: reg, start: time.Now(), bounds: DefaultBucketBoundaries()}
}

// Produce returns the calls histogram of every breaker in the registry, read from its
// CallStats now, as the SDK's metric.Producer. It returns nothing, and no error, when the
// registry holds no breaker with a call.
func (p *CallsProducer) Produce(context.Context) ([]metricdata.ScopeMetrics, error) {
	if p == nil || p.reg == nil {
		return nil, nil
	}
	now := time.Now()
	var points []metricdata.HistogramDataPoint[float64]
	for _, cb := range p.reg.CircuitBreakers() {
		s := cb.CallStats()
		name := cb.Name()
		tags := p.reg.Tags(registry.CircuitBreaker, name)
		for _, k := range [...]struct {
			kind string
			d    *circuitbreaker.CallDurations
		}{{"successful", &s.Successful}, {"failed", &s.Failed}, {"ignored", &s.Ignored}} {
			if k.d.Count == 0 {
				continue
			}
			points = append(points, metricdata.HistogramDataPoint[float64]{
				Attributes:   attrSet(name, tags, attribute.String(keyKind, k.kind)),
				StartTime:    p.start,
				Time:         now,
				Count:        k.d.Count,
				Bounds:       p.bounds,
				BucketCounts: append([]uint64(nil), k.d.Buckets[:]...),
				Sum:          k.d.TotalDuration.Seconds(),
			})
		}
	}
	if len(points) == 0 {
		return nil, nil
	}
	return []metricdata.ScopeMetrics{{
		Scope: instrumentation.Scope{Name: ScopeName, Version: version},
		Metrics: []metricdata.Metrics{{
			Name:        callsName,
			Description: callsDescription,
			Unit:        "s",
			Data: metricdata.Histogram[float64]{
				Temporality: metricdata.CumulativeTemporality,
				DataPoints:  points,
			},
		}},
	}}, nil
}
