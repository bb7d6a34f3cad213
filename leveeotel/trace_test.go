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
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/leveeotel"
	"github.com/levee-go/levee/retry"
)

var errDown = errors.New("down")

// event is a span event as the test compares it: its name, attributes and instant since the
// span started.
type event struct {
	Name  string
	At    time.Duration
	Attrs map[attribute.Key]attribute.Value
}

func events(s sdktrace.ReadOnlySpan) []event {
	var out []event
	for _, e := range s.Events() {
		attrs := map[attribute.Key]attribute.Value{}
		for _, a := range e.Attributes {
			attrs[a.Key] = a.Value
		}
		out = append(out, event{Name: e.Name, At: e.Time.Sub(s.StartTime()), Attrs: attrs})
	}
	return out
}

func TestTracingWritesEachEventOnTheCallsSpan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()

		cb := levee.Must(circuitbreaker.New("inventory", circuitbreaker.Config{SlidingWindowSize: 2, MinimumNumberOfCalls: 2}))
		rt := levee.Must(retry.New("inventory", retry.Config{MaxAttempts: 3, WaitDuration: 10 * time.Millisecond}))
		fb := levee.Must(fallback.New("inventory", fallback.OnError(circuitbreaker.ErrCallNotPermitted, fallback.Value("cached"))))
		p := levee.DefaultPipeline(levee.Patterns{Retry: rt, CircuitBreaker: cb}, fb)

		ctx, span := tp.Tracer("test").Start(context.Background(), "GET /stock")
		v, err := p.Execute(leveeotel.ContextWithTracing(ctx), func(context.Context) (string, error) { return "", errDown })
		span.End()
		require.NoError(t, err)
		assert.Equal(t, "cached", v)

		spans := exp.GetSpans().Snapshots()
		require.Len(t, spans, 1, "Tracing starts no span of its own")
		str, num, dur := attribute.StringValue, attribute.IntValue, attribute.Float64Value
		retryAttrs := func(extra map[attribute.Key]attribute.Value) map[attribute.Key]attribute.Value {
			m := map[attribute.Key]attribute.Value{leveeotel.AttrPattern: str("retry"), leveeotel.AttrName: str("inventory")}
			for k, v := range extra {
				m[k] = v
			}
			return m
		}
		rejection := str("*circuitbreaker.CallNotPermittedError")
		assert.Equal(t, []event{
			{leveeotel.EventAttempt, 0, retryAttrs(map[attribute.Key]attribute.Value{leveeotel.AttrAttempt: num(1), leveeotel.AttrErrorType: str("*errors.errorString")})},
			{leveeotel.EventWait, 0, retryAttrs(map[attribute.Key]attribute.Value{leveeotel.AttrAttempt: num(2), leveeotel.AttrWaitDuration: dur(0.01)})},
			{leveeotel.EventTransition, 10 * time.Millisecond, map[attribute.Key]attribute.Value{
				leveeotel.AttrPattern: str("circuitbreaker"), leveeotel.AttrName: str("inventory"),
				leveeotel.AttrStateFrom: str("closed"), leveeotel.AttrStateTo: str("open"),
			}},
			{leveeotel.EventAttempt, 10 * time.Millisecond, retryAttrs(map[attribute.Key]attribute.Value{leveeotel.AttrAttempt: num(2), leveeotel.AttrResendCount: num(1), leveeotel.AttrErrorType: str("*errors.errorString")})},
			{leveeotel.EventWait, 10 * time.Millisecond, retryAttrs(map[attribute.Key]attribute.Value{leveeotel.AttrAttempt: num(3), leveeotel.AttrWaitDuration: dur(0.01)})},
			{leveeotel.EventRejection, 20 * time.Millisecond, map[attribute.Key]attribute.Value{
				leveeotel.AttrPattern: str("circuitbreaker"), leveeotel.AttrName: str("inventory"), leveeotel.AttrErrorType: rejection,
			}},
			{leveeotel.EventAttempt, 20 * time.Millisecond, retryAttrs(map[attribute.Key]attribute.Value{leveeotel.AttrAttempt: num(3), leveeotel.AttrResendCount: num(2), leveeotel.AttrErrorType: rejection})},
			{leveeotel.EventFallback, 20 * time.Millisecond, map[attribute.Key]attribute.Value{
				leveeotel.AttrPattern: str("fallback"), leveeotel.AttrName: str("inventory"), leveeotel.AttrErrorType: rejection,
			}},
		}, events(spans[0]))
	})
}

func TestContextWithTracingWithoutARecordingSpan(t *testing.T) {
	ctx := context.Background()
	assert.Equal(t, ctx, leveeotel.ContextWithTracing(ctx), "no span")
	_, span := noop.NewTracerProvider().Tracer("test").Start(ctx, "call")
	noopCtx := trace.ContextWithSpan(ctx, span)
	assert.Equal(t, noopCtx, leveeotel.ContextWithTracing(noopCtx), "a no-op provider's span")
	assert.Nil(t, levee.CallObserverFrom(leveeotel.ContextWithTracing(noopCtx)))

	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(sdktrace.NeverSample()))
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
	unsampled, span := tp.Tracer("test").Start(ctx, "call")
	defer span.End()
	assert.Equal(t, unsampled, leveeotel.ContextWithTracing(unsampled), "an unsampled span")
}

func TestTracingAllocatesNothingWithoutARecordingSpan(t *testing.T) {
	p := levee.DefaultPipeline[int](levee.Patterns{
		Retry:          levee.Must(retry.New("r", retry.Config{MaxAttempts: 3})),
		CircuitBreaker: levee.Must(circuitbreaker.New("cb", circuitbreaker.Config{})),
	}, nil)
	call := func(context.Context) (int, error) { return 1, nil }
	_, span := noop.NewTracerProvider().Tracer("test").Start(context.Background(), "call")
	ctx := trace.ContextWithSpan(context.Background(), span)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = p.Execute(leveeotel.ContextWithTracing(ctx), call) }))
	// The observer installed by hand on a span that does not record adds nothing either.
	observed := levee.WithCallObserver(ctx, leveeotel.Tracing{})
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = p.Execute(observed, call) }))
}
