package fallback_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/internal/safe"
)

func TestResultReplacement(t *testing.T) {
	empty := func(v string) bool { return v == "" }
	f := labelled(t,
		fallback.OnResult(empty, func(context.Context, string) (string, error) { return "placeholder", nil }),
		fallback.OnResult(func(v string) bool { return len(v) > 5 }, func(_ context.Context, v string) (string, error) { return v[:5], nil }),
		fallback.OnResult(func(v string) bool { return len(v) > 3 }, func(_ context.Context, v string) (string, error) { return "never", nil }),
		fallback.OnError(errBoom, answer("boom")),
	)
	tests := []struct {
		live    string
		want    string
		replace bool
	}{
		{"", "placeholder", true},
		{"abcdefgh", "abcde", true}, // the first matching predicate answers
		{"abc", "abc", false},
	}
	for _, tt := range tests {
		v, out, err := fallback.ExecuteOutcome(context.Background(), f, func(context.Context) (string, error) { return tt.live, nil })
		require.NoError(t, err)
		assert.Equal(t, tt.want, v)
		assert.Equal(t, fallback.Outcome{Fallback: tt.replace}, out)
	}
	// A failed call never reaches the result handlers, even with a matching zero value.
	v, out, err := fallback.ExecuteOutcome(context.Background(), f, failing[string](errBoom))
	require.NoError(t, err)
	assert.Equal(t, "boom", v)
	assert.Equal(t, fallback.Outcome{Fallback: true, Cause: errBoom}, out)
	assert.Equal(t, fallback.Metrics{NumberOfFallbackAnswers: 3}, f.Metrics())
}

func TestResultHandlerFailures(t *testing.T) {
	always := func(string) bool { return true }
	t.Run("error", func(t *testing.T) {
		f := labelled(t, fallback.OnResult(always, func(context.Context, string) (string, error) { return "x", errPriceUnavailable }))
		v, out, err := fallback.ExecuteOutcome(context.Background(), f, func(context.Context) (string, error) { return "live", nil })
		assert.Equal(t, "", v)
		assert.Equal(t, fallback.Outcome{}, out)
		var fe *fallback.Error
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, fallback.Error{Name: "pricing", Err: errPriceUnavailable}, *fe)
		assert.Equal(t, []error{errPriceUnavailable}, fe.Unwrap())
		assert.Equal(t, `fallback "pricing": price unavailable`, err.Error())
		assert.Equal(t, fallback.Metrics{NumberOfFailedFallbacks: 1}, f.Metrics())
	})
	t.Run("handler panic", func(t *testing.T) {
		f := labelled(t, fallback.OnResult(always, func(context.Context, string) (string, error) { panic("replace broke") }))
		_, err := fallback.Execute(context.Background(), f, func(context.Context) (string, error) { return "live", nil })
		var pe *safe.PanicError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, "replace broke", pe.Value)
		assert.Equal(t, fallback.Metrics{NumberOfFailedFallbacks: 1}, f.Metrics())
	})
	t.Run("predicate panic", func(t *testing.T) {
		f := labelled(t, fallback.OnResult(func(string) bool { panic("predicate broke") }, func(_ context.Context, v string) (string, error) { return v, nil }))
		_, err := fallback.Execute(context.Background(), f, func(context.Context) (string, error) { return "live", nil })
		var pe *safe.PanicError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, "predicate broke", pe.Value)
		assert.Equal(t, fallback.Metrics{NumberOfFailedFallbacks: 1}, f.Metrics())
	})
}
