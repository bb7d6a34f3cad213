package fallback_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/fallback"
)

// callerCtx makes, inside the current synctest bubble, a context of the given kind: "cancelled"
// (cancelled by its caller), "expired" (its deadline passed) or "alive".
func callerCtx(t *testing.T, kind string) context.Context {
	switch kind {
	case "cancelled":
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	case "expired":
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		t.Cleanup(cancel)
		time.Sleep(2 * time.Second)
		require.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
		return ctx
	}
	return context.Background()
}

// The caller's own cancellation is not answered, except by a handler that targets it.
func TestCallerCancellation(t *testing.T) {
	anyCalled := 0
	onAny := fallback.OnAny(func(context.Context, error) (string, error) { anyCalled++; return "any", nil })
	returnCtxErr := func(ctx context.Context) (string, error) { return "", fmt.Errorf("fetch: %w", ctx.Err()) }

	tests := []struct {
		name     string
		handlers []fallback.Handler[string]
		ctx      string
		call     func(context.Context) (string, error)
		want     string // "" when the error comes back unchanged
		metrics  fallback.Metrics
	}{
		{"cancelled caller: the catch-all does not answer", []fallback.Handler[string]{onAny}, "cancelled", returnCtxErr, "", fallback.Metrics{}},
		{"expired caller: the catch-all does not answer", []fallback.Handler[string]{onAny}, "expired", returnCtxErr, "", fallback.Metrics{}},
		{"cancelled caller: a type handler does not answer",
			[]fallback.Handler[string]{onType[*GatewayError]("g")}, "cancelled",
			func(ctx context.Context) (string, error) { return "", &GatewayError{Err: ctx.Err()} }, "", fallback.Metrics{}},
		{"cancelled caller: OnError(context.Canceled) answers",
			[]fallback.Handler[string]{onAny, fallback.OnError(context.Canceled, answer("cancelled"))}, "cancelled", returnCtxErr, "cancelled",
			fallback.Metrics{NumberOfFallbackAnswers: 1}},
		{"expired caller: OnError(context.DeadlineExceeded) answers",
			[]fallback.Handler[string]{fallback.OnError(context.DeadlineExceeded, answer("expired")), onAny}, "expired", returnCtxErr, "expired",
			fallback.Metrics{NumberOfFallbackAnswers: 1}},
		{"expired caller: OnError(context.Canceled) does not answer",
			[]fallback.Handler[string]{fallback.OnError(context.Canceled, answer("cancelled")), onAny}, "expired", returnCtxErr, "", fallback.Metrics{}},
		{"live caller: an inner deadline is an ordinary error",
			[]fallback.Handler[string]{onAny}, "alive", failing[string](fmt.Errorf("attempt: %w", context.DeadlineExceeded)), "any",
			fallback.Metrics{NumberOfFallbackAnswers: 1}},
		{"cancelled caller, but the call failed otherwise: answered",
			[]fallback.Handler[string]{onAny}, "cancelled", failing[string](errBoom), "any", fallback.Metrics{NumberOfFallbackAnswers: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				anyCalled = 0
				f := labelled(t, tt.handlers...)
				events := 0
				defer f.Subscribe(func(fallback.Event) { events++ })()
				var callErr error
				v, out, err := fallback.ExecuteOutcome(callerCtx(t, tt.ctx), f, func(ctx context.Context) (string, error) {
					v, err := tt.call(ctx)
					callErr = err
					return v, err
				})
				assert.Equal(t, tt.want, v)
				if tt.want == "" {
					assert.True(t, err == callErr, "want the call's error unchanged, got %v", err)
					assert.Equal(t, fallback.Outcome{}, out)
					assert.Equal(t, 0, anyCalled)
				} else {
					require.NoError(t, err)
					assert.Equal(t, fallback.Outcome{Fallback: true, Cause: callErr}, out)
				}
				assert.Equal(t, tt.metrics, f.Metrics())
				assert.Equal(t, tt.metrics.NumberOfFallbackAnswers, events)
			})
		})
	}
}
