package leveeotel_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveeotel"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/retry"
)

// An application wires its registry to its MeterProvider once; an exporter (here a manual
// reader, in production a periodic reader with an OTLP or Prometheus exporter) reads the
// instruments. After 8 calls to a failing gateway through a breaker of a window of 5 calls,
// the breaker is OPEN, 5 calls failed and 3 were not permitted.
func Example() {
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer provider.Shutdown(context.Background())

	reg := registry.New()
	metrics, err := leveeotel.New(reg, leveeotel.WithMeterProvider(provider))
	if err != nil {
		log.Fatal(err)
	}
	defer metrics.Close()

	cb, _ := circuitbreaker.New("gateway", circuitbreaker.Config{SlidingWindowSize: 5, MinimumNumberOfCalls: 5})
	_ = reg.AddCircuitBreaker(cb)
	for range 8 {
		_, _ = circuitbreaker.Execute(context.Background(), cb, func(context.Context) (string, error) {
			return "", errors.New("503 Service Unavailable")
		})
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		log.Fatal(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		switch d := m.Data.(type) {
		case metricdata.Gauge[int64]:
			for _, p := range d.DataPoints {
				if s, ok := p.Attributes.Value("state"); ok && p.Value == 1 {
					fmt.Printf("%s{state=%s} 1\n", m.Name, s.AsString())
				}
			}
		case metricdata.Gauge[float64]:
			fmt.Printf("%s %v\n", m.Name, d.DataPoints[0].Value)
		case metricdata.Sum[int64]:
			fmt.Printf("%s %d\n", m.Name, d.DataPoints[0].Value)
		case metricdata.Histogram[float64]:
			kind, _ := d.DataPoints[0].Attributes.Value("kind")
			fmt.Printf("%s{kind=%s} count %d\n", m.Name, kind.AsString(), d.DataPoints[0].Count)
		}
	}
	// Unordered output:
	// resilience4j.circuitbreaker.state{state=open} 1
	// resilience4j.circuitbreaker.calls{kind=failed} count 5
	// resilience4j.circuitbreaker.not.permitted.calls 3
	// resilience4j.circuitbreaker.failure.rate 100
	// resilience4j.circuitbreaker.slow.call.rate 0
}

// One call's span with the events of its retry: two failed attempts and the third that
// succeeded (a retry that waits also writes a levee.wait event before each retry).
func ExampleContextWithTracing() {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	rt := levee.Must(retry.New("stock", retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait}))
	p := levee.Compose[string]().WithRetry(rt)

	ctx, span := tp.Tracer("example").Start(context.Background(), "GET /stock")
	attempts := 0
	_, _ = p.Execute(leveeotel.ContextWithTracing(ctx), func(context.Context) (string, error) {
		attempts++
		if attempts < 3 {
			return "", errors.New("unavailable")
		}
		return "12 in stock", nil
	})
	span.End()
	for _, e := range exp.GetSpans()[0].Events {
		var attrs []string
		for _, a := range e.Attributes {
			attrs = append(attrs, string(a.Key)+"="+a.Value.Emit())
		}
		fmt.Println(e.Name, strings.Join(attrs, " "))
	}
	// Output:
	// levee.attempt levee.pattern=retry levee.name=stock levee.attempt=1 error.type=*errors.errorString
	// levee.attempt levee.pattern=retry levee.name=stock levee.attempt=2 http.request.resend_count=1 error.type=*errors.errorString
	// levee.attempt levee.pattern=retry levee.name=stock levee.attempt=3 http.request.resend_count=2
}
