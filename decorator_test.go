package levee_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/retry"
)

// tag returns a decorator that appends name to *trace before and after next.
func tag(trace *[]string, name string) levee.Decorator[string] {
	return func(ctx context.Context, next func(context.Context) (string, error)) (string, error) {
		*trace = append(*trace, name+">")
		v, err := next(ctx)
		*trace = append(*trace, "<"+name)
		return v + name, err
	}
}

func TestWithOrder(t *testing.T) {
	var trace []string
	p := levee.Compose[string]().With(tag(&trace, "a")).With(tag(&trace, "b"))
	v, err := p.Execute(context.Background(), func(context.Context) (string, error) {
		trace = append(trace, "call")
		return "v", nil
	})
	require.NoError(t, err)
	assert.Equal(t, "vab", v)
	assert.Equal(t, []string{"b>", "a>", "call", "<a", "<b"}, trace)
}

func TestWithAroundPatterns(t *testing.T) {
	b := &backend{}
	b.failing.Store(true)
	answered := 0
	answer := func(ctx context.Context, next func(context.Context) (string, error)) (string, error) {
		v, err := next(ctx)
		if err != nil {
			answered++
			return "cached", nil
		}
		return v, nil
	}
	r := newRetry(t, 3, retry.Config{WaitDuration: retry.NoWait})
	p := levee.Compose[string]().WithRetry(r).With(answer)
	v, err := p.Execute(context.Background(), b.call)
	require.NoError(t, err)
	assert.Equal(t, "cached", v)
	assert.Equal(t, 1, answered)
	assert.Equal(t, int64(3), b.calls.Load())

	// Inside the retry, the decorator answers each attempt: the retry sees a success.
	p = levee.Compose[string]().With(answer).WithRetry(r)
	v, err = p.Execute(context.Background(), b.call)
	require.NoError(t, err)
	assert.Equal(t, "cached", v)
	assert.Equal(t, 2, answered)
	assert.Equal(t, int64(4), b.calls.Load())
}

func TestWithShortCircuitAndOutcome(t *testing.T) {
	errRefused := errors.New("refused by decorator")
	refuse := func(context.Context, func(context.Context) (string, error)) (string, error) { return "", errRefused }
	p := levee.Compose[string]().With(refuse).WithFallback(newFallback(t, "fb"))
	b := &backend{}
	v, out, err := p.ExecuteOutcome(context.Background(), b.call)
	require.NoError(t, err)
	assert.Equal(t, "fb", v)
	assert.True(t, out.Fallback)
	assert.Same(t, errRefused, out.Cause)
	assert.Equal(t, int64(0), b.calls.Load())
}

func TestWithPanics(t *testing.T) {
	boom := func(context.Context, func(context.Context) (string, error)) (string, error) { panic("decorator") }
	_, err := levee.Compose[string]().With(boom).Execute(context.Background(), (&backend{}).call)
	var pe *levee.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "decorator", pe.Value)

	// Innermost, the decorator runs the call itself: its panic is guarded too.
	pass := func(ctx context.Context, next func(context.Context) (string, error)) (string, error) {
		return next(ctx)
	}
	_, err = levee.Compose[string]().With(pass).Execute(context.Background(), func(context.Context) (string, error) { panic("call") })
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "call", pe.Value)
}

func TestWithNil(t *testing.T) {
	var trace []string
	p := levee.Compose[string]().With(nil).With(tag(&trace, "a")).With(nil)
	v, err := p.Execute(context.Background(), (&backend{}).call)
	require.NoError(t, err)
	assert.Equal(t, "oka", v)
	assert.Equal(t, []string{"a>", "<a"}, trace)

	var nilPipeline *levee.Pipeline[string]
	v, err = nilPipeline.With(tag(&trace, "b")).Execute(context.Background(), (&backend{}).call)
	require.NoError(t, err)
	assert.Equal(t, "okb", v)
}

// A fallback inside a decorator reports its answer through ExecuteOutcome; when the decorator
// runs next again, only the run whose result it returns counts.
func TestWithOutcomeOfInnerFallback(t *testing.T) {
	b := &backend{}
	b.failing.Store(true)
	pass := func(ctx context.Context, next func(context.Context) (string, error)) (string, error) {
		return next(ctx)
	}
	p := levee.Compose[string]().WithFallback(newFallback(t, "fb")).With(pass)
	v, out, err := p.ExecuteOutcome(context.Background(), b.call)
	require.NoError(t, err)
	assert.Equal(t, "fb", v)
	assert.True(t, out.Fallback)
	assert.Same(t, errBackend, out.Cause)

	twice := func(ctx context.Context, next func(context.Context) (string, error)) (string, error) {
		_, _ = next(ctx)
		b.failing.Store(false)
		return next(ctx)
	}
	p = levee.Compose[string]().WithFallback(newFallback(t, "fb")).With(twice)
	v, out, err = p.ExecuteOutcome(context.Background(), b.call)
	require.NoError(t, err)
	assert.Equal(t, "ok", v)
	assert.False(t, out.Fallback)
	assert.Equal(t, int64(3), b.calls.Load())
}
