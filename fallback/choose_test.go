package fallback_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/internal/safe"
)

// rejection is a levee rejection, as an open breaker's error.
type rejection struct{}

func (rejection) Error() string        { return "CircuitBreaker 'pricing' is OPEN" }
func (rejection) LeveeRejection() bool { return true }

// labelled builds a Fallback whose handlers answer with their labels.
func labelled[T any](t *testing.T, hs ...fallback.Handler[T]) *fallback.Fallback[T] {
	t.Helper()
	f, err := fallback.New("pricing", hs...)
	require.NoError(t, err)
	return f
}

func TestClosestMatchWins(t *testing.T) {
	gw := &GatewayError{Status: 503, Err: io.ErrUnexpectedEOF}
	onGateway := onType[*GatewayError]("gateway")
	onEOF := fallback.OnError(io.ErrUnexpectedEOF, answer("eof"))
	onNotFound := fallback.OnError(errNotFound, answer("not found"))
	onAny := fallback.OnAny(answer("any"))
	tests := []struct {
		name     string
		handlers []fallback.Handler[string]
		err      error
		want     string
	}{
		{"type of the outer link beats a sentinel it wraps", []fallback.Handler[string]{onEOF, onGateway}, gw, "gateway"},
		{"order of listing does not matter across links", []fallback.Handler[string]{onGateway, onEOF}, gw, "gateway"},
		{"a plain outer wrapper is walked through", []fallback.Handler[string]{onEOF, onGateway}, fmt.Errorf("pay: %w", gw), "gateway"},
		{"the inner sentinel when the outer type has no handler", []fallback.Handler[string]{onEOF, onAny}, fmt.Errorf("pay: %w", gw), "eof"},
		{"the catch-all only when no link matches", []fallback.Handler[string]{onAny, onNotFound}, gw, "any"},
		{"the catch-all loses to a match deep inside", []fallback.Handler[string]{onAny, onEOF}, fmt.Errorf("a: %w", fmt.Errorf("b: %w", gw)), "eof"},
		{"joined errors: the first branch wins, depth first",
			[]fallback.Handler[string]{onGateway, onNotFound}, errors.Join(fmt.Errorf("deep: %w", errNotFound), gw), "not found"},
		{"joined errors: a later branch when the first has no match",
			[]fallback.Handler[string]{onNotFound, onGateway}, errors.Join(errOther, gw), "gateway"},
		{"a link whose Is method claims the sentinel", []fallback.Handler[string]{onNotFound, onGateway},
			fmt.Errorf("x: %w", &isError{target: errNotFound}), "not found"},
		{"a link whose As method yields the type", []fallback.Handler[string]{onEOF, onGateway},
			&asError{gw: &GatewayError{Status: 502}}, "gateway"},
		{"an interface type", []fallback.Handler[string]{onEOF, onType[timeouter]("timeout")}, fmt.Errorf("x: %w", gw), "timeout"},
		{"a value type", []fallback.Handler[string]{onType[valueError]("value"), onAny}, fmt.Errorf("x: %w", valueError{3}), "value"},
		{"a value sentinel", []fallback.Handler[string]{fallback.OnError(valueError{3}, answer("v3")), onAny}, fmt.Errorf("x: %w", valueError{3}), "v3"},
		{"a different value is a different sentinel", []fallback.Handler[string]{fallback.OnError(valueError{4}, answer("v4")), onAny}, valueError{3}, "any"},
		{"an uncomparable link does not panic", []fallback.Handler[string]{fallback.OnError(listError{[]string{"a"}}, answer("list")), onNotFound},
			errors.Join(listError{[]string{"a"}}, errNotFound), "not found"},
		{"nil entries of a multi-error are skipped", []fallback.Handler[string]{onNotFound}, &multiError{errs: []error{nil, errNotFound}}, "not found"},
		{"a panic of the call is an error like any other", []fallback.Handler[string]{onType[*safe.PanicError]("panic"), onEOF},
			fmt.Errorf("x: %w", safe.NewPanicError(io.ErrUnexpectedEOF)), "panic"},
		{"a levee rejection reaches the fallback", []fallback.Handler[string]{onNotFound, onAny}, fmt.Errorf("x: %w", rejection{}), "any"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := labelled(t, tt.handlers...)
			v, out, err := fallback.ExecuteOutcome(context.Background(), f, failing[string](tt.err))
			require.NoError(t, err)
			assert.Equal(t, tt.want, v)
			assert.Equal(t, fallback.Outcome{Fallback: true, Cause: tt.err}, out)
		})
	}
}

// Within one link, handlers are tried in the order listed, as the cases of a type switch.
func TestWithinALinkTheFirstListedWins(t *testing.T) {
	gw := &GatewayError{Status: 504, Err: errBoom}
	unwrapper := onType[interface {
		error
		Unwrap() error
	}]("unwrapper")
	timeout := onType[timeouter]("timeout")
	sentinel := fallback.OnError(gw, answer("sentinel"))

	v, err := fallback.Execute(context.Background(), labelled(t, timeout, unwrapper), failing[string](gw))
	require.NoError(t, err)
	assert.Equal(t, "timeout", v)

	v, err = fallback.Execute(context.Background(), labelled(t, unwrapper, timeout), failing[string](gw))
	require.NoError(t, err)
	assert.Equal(t, "unwrapper", v)

	v, err = fallback.Execute(context.Background(), labelled(t, sentinel, onType[*GatewayError]("type")), failing[string](gw))
	require.NoError(t, err)
	assert.Equal(t, "sentinel", v)

	// Another *GatewayError is not the sentinel: the type handler takes it.
	v, err = fallback.Execute(context.Background(), labelled(t, sentinel, onType[*GatewayError]("type")), failing[string](&GatewayError{Status: 504}))
	require.NoError(t, err)
	assert.Equal(t, "type", v)
}

func TestHandlersReceive(t *testing.T) {
	gw := &GatewayError{Status: 503, Err: errNotFound}
	outer := fmt.Errorf("pay: %w", gw)

	t.Run("a type handler receives the matching link typed", func(t *testing.T) {
		var got *GatewayError
		f := labelled(t, fallback.OnType(func(_ context.Context, e *GatewayError) (string, error) { got = e; return "g", nil }))
		_, err := fallback.Execute(context.Background(), f, failing[string](outer))
		require.NoError(t, err)
		assert.Same(t, gw, got)
	})
	t.Run("an interface handler receives the link as the interface", func(t *testing.T) {
		var got timeouter
		f := labelled(t, fallback.OnType(func(_ context.Context, e timeouter) (string, error) { got = e; return "t", nil }))
		_, err := fallback.Execute(context.Background(), f, failing[string](outer))
		require.NoError(t, err)
		assert.Same(t, gw, got)
	})
	t.Run("a type handler receives what the As method yields", func(t *testing.T) {
		inner := &GatewayError{Status: 502}
		var got *GatewayError
		f := labelled(t, fallback.OnType(func(_ context.Context, e *GatewayError) (string, error) { got = e; return "g", nil }))
		_, err := fallback.Execute(context.Background(), f, failing[string](fmt.Errorf("x: %w", &asError{gw: inner})))
		require.NoError(t, err)
		assert.Same(t, inner, got)
	})
	t.Run("a value type handler receives the value", func(t *testing.T) {
		var got valueError
		f := labelled(t, fallback.OnType(func(_ context.Context, e valueError) (string, error) { got = e; return "v", nil }))
		_, err := fallback.Execute(context.Background(), f, failing[string](fmt.Errorf("x: %w", valueError{9})))
		require.NoError(t, err)
		assert.Equal(t, valueError{9}, got)
	})
	t.Run("a sentinel handler receives the whole error", func(t *testing.T) {
		var got error
		f := labelled(t, fallback.OnError(errNotFound, func(_ context.Context, e error) (string, error) { got = e; return "n", nil }))
		_, err := fallback.Execute(context.Background(), f, failing[string](outer))
		require.NoError(t, err)
		assert.True(t, got == outer, "got %v", got)
	})
	t.Run("the catch-all receives the whole error", func(t *testing.T) {
		var got error
		f := labelled(t, fallback.OnAny(func(_ context.Context, e error) (string, error) { got = e; return "a", nil }))
		_, err := fallback.Execute(context.Background(), f, failing[string](outer))
		require.NoError(t, err)
		assert.True(t, got == outer, "got %v", got)
	})
	t.Run("every handler receives the caller's context", func(t *testing.T) {
		type key struct{}
		ctx := context.WithValue(context.Background(), key{}, "caller")
		var got any
		f := labelled(t, fallback.OnAny(func(ctx context.Context, _ error) (string, error) { got = ctx.Value(key{}); return "a", nil }))
		_, err := fallback.Execute(ctx, f, failing[string](errBoom))
		require.NoError(t, err)
		assert.Equal(t, "caller", got)
	})
}

// Resilience4j: no matching fallback method, or a lone one of another type, rethrows the
// original exception unchanged. levee returns the very same error value.
func TestNoMatchingHandlerReturnsTheOriginalUnchanged(t *testing.T) {
	gw := &GatewayError{Status: 503, Err: errBoom}
	for _, hs := range [][]fallback.Handler[string]{
		{fallback.OnError(errNotFound, answer("n"))},
		{onType[*isError]("i")},
		{fallback.OnError(errNotFound, answer("n")), onType[valueError]("v"), fallback.OnResult(func(string) bool { return true }, func(_ context.Context, v string) (string, error) { return v, nil })},
	} {
		f := labelled(t, hs...)
		v, out, err := fallback.ExecuteOutcome(context.Background(), f, failing[string](gw))
		assert.True(t, err == error(gw), "err %v is not the original", err)
		assert.Empty(t, v)
		assert.Equal(t, fallback.Outcome{}, out)
		assert.Equal(t, fallback.Metrics{NumberOfUnhandledErrors: 1}, f.Metrics())
	}
}

// A panic in a link's Is method is not a crash: the fallback fails with the panic and the cause.
func TestPanickingIsMethodBecomesAFailedFallback(t *testing.T) {
	f := labelled(t, fallback.OnError(errNotFound, answer("n")), fallback.OnAny(answer("any")))
	cause := fmt.Errorf("x: %w", panickyIs{})
	_, err := fallback.Execute(context.Background(), f, failing[string](cause))
	var fe *fallback.Error
	require.ErrorAs(t, err, &fe)
	var pe *safe.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "Is exploded", pe.Value)
	assert.True(t, fe.Cause == cause)
	assert.ErrorIs(t, err, cause)
	assert.Equal(t, fallback.Metrics{NumberOfFailedFallbacks: 1}, f.Metrics())
}
