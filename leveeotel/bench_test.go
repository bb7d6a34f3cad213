package leveeotel_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveeotel"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/retry"
)

// The cost of a successful call through a breaker with a Metrics attached (one event, one
// histogram record), with and without tags on the breaker.
func BenchmarkExecuteAttached(b *testing.B) {
	for _, tagged := range []bool{false, true} {
		name := "untagged"
		if tagged {
			name = "tagged"
		}
		b.Run(name, func(b *testing.B) {
			h := newHarness(b)
			cb, err := circuitbreaker.New("gateway", circuitbreaker.Config{})
			require.NoError(b, err)
			require.NoError(b, h.reg.AddCircuitBreaker(cb))
			if tagged {
				require.NoError(b, h.reg.SetTags(registry.CircuitBreaker, "gateway", map[string]string{"team": "checkout"}))
			}
			call := func(context.Context) (int, error) { return 1, nil }
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				_, _ = circuitbreaker.Execute(ctx, cb, call)
			}
			require.NoError(b, h.m.Close())
		})
	}
}

// The cost of a successful call through a retry and a breaker: without tracing, with
// ContextWithTracing and no tracer provider (the global no-op one: nothing is added), and with
// a span that records (one levee.attempt event written per call).
func BenchmarkTracing(b *testing.B) {
	p := levee.DefaultPipeline[int](levee.Patterns{
		Retry:          levee.Must(retry.New("r", retry.Config{MaxAttempts: 3})),
		CircuitBreaker: levee.Must(circuitbreaker.New("cb", circuitbreaker.Config{})),
	}, nil)
	call := func(context.Context) (int, error) { return 1, nil }
	b.Run("none", func(b *testing.B) {
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			_, _ = p.Execute(ctx, call)
		}
	})
	b.Run("no-provider", func(b *testing.B) {
		ctx, span := otel.Tracer("bench").Start(context.Background(), "call")
		defer span.End()
		b.ReportAllocs()
		for b.Loop() {
			_, _ = p.Execute(leveeotel.ContextWithTracing(ctx), call)
		}
	})
	b.Run("recording", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanLimits(sdktrace.SpanLimits{EventCountLimit: 1, AttributeCountLimit: 8, AttributePerEventCountLimit: 8}))
		defer func() { _ = tp.Shutdown(context.Background()) }()
		ctx, span := tp.Tracer("bench").Start(context.Background(), "call")
		defer span.End()
		b.ReportAllocs()
		for b.Loop() {
			_, _ = p.Execute(leveeotel.ContextWithTracing(ctx), call)
		}
	})
}
