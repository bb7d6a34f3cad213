package fallback_test

// Regression tests named after the Resilience4j fallback pitfalls and composition rules of the
// composition article, each showing what levee guarantees instead.

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/internal/errmatch"
	"github.com/levee-go/levee/internal/safe"
)

// Resilience4j: two fallback methods for the same exception type throw IllegalStateException
// on every call, healthy ones included, before the backend is called. levee: New refuses them,
// so the mistake is found once, at start-up, and no call is ever affected.
func TestPitfallTwoHandlersForOneTypeRefusedAtBuildNotPerCall(t *testing.T) {
	h := func(context.Context, *GatewayError) (Money, error) { return Money{Stale: true}, nil }
	f, err := fallback.New("pricing", fallback.OnType(h), fallback.OnType(h))
	require.EqualError(t, err, `fallback: handlers 0 and 1 both handle type *fallback_test.GatewayError`)
	assert.Nil(t, f)

	ok, err := fallback.New("pricing", fallback.OnType(h))
	require.NoError(t, err)
	for range 10 {
		m, out, err := fallback.ExecuteOutcome(context.Background(), ok, func(context.Context) (Money, error) { return Money{Cents: 1}, nil })
		require.NoError(t, err)
		assert.Equal(t, Money{Cents: 1}, m)
		assert.False(t, out.Fallback)
	}
}

// Resilience4j: a fallback whose signature is almost right is ignored with one WARN line and the
// original exception propagates. levee: a handler's signature is checked by the compiler, and
// what the compiler cannot check (a nil function, a type marker given as a sentinel) is refused
// by New with an error, not a log line.
func TestPitfallAlmostRightFallbackIsRefusedNotIgnored(t *testing.T) {
	_, err := fallback.New("pricing", fallback.OnError(errmatch.Type[*GatewayError](), fallback.Value(Money{})))
	require.EqualError(t, err, `fallback: handler 0 has levee.ErrorType[*fallback_test.GatewayError]() as OnError target; use OnType[*fallback_test.GatewayError]`)
	_, err = fallback.New("pricing", fallback.OnType[*GatewayError, Money](nil))
	require.EqualError(t, err, `fallback: handler 0 (type *fallback_test.GatewayError) has a nil handler function`)
}

// Resilience4j: an exception thrown by the fallback replaces the original, which is lost.
// levee: both are in the returned error's chain.
func TestPitfallFallbackExceptionReplacesOriginal(t *testing.T) {
	cause := &GatewayError{Status: 503, Err: errBoom}
	f := labelled(t, fallback.OnType(func(context.Context, *GatewayError) (Money, error) {
		return Money{}, errPriceUnavailable
	}))
	_, err := fallback.Execute(context.Background(), f, failing[Money](cause))
	assert.ErrorIs(t, err, errPriceUnavailable)
	assert.ErrorIs(t, err, cause)
	assert.ErrorIs(t, err, errBoom)
}

// Resilience4j: an Error (a Java panic) reaches only a fallback typed Throwable. levee: a panic
// in the call is a *levee.PanicError that every matching handler sees, the catch-all included.
func TestPitfallErrorsReachOnlyThrowableFallbacks(t *testing.T) {
	f := labelled(t, fallback.OnAny(func(_ context.Context, err error) (string, error) {
		var pe *safe.PanicError
		if errors.As(err, &pe) {
			return fmt.Sprint("recovered ", pe.Value), nil
		}
		return "other", nil
	}))
	v, err := fallback.Execute(context.Background(), f, func(context.Context) (string, error) {
		var m map[string]int
		m["x"] = 1 // a runtime panic: assignment to a nil map
		return "", nil
	})
	require.NoError(t, err)
	assert.Equal(t, "recovered assignment to entry in nil map", v)
}

// Seed rule: the breaker state does not matter, a CallNotPermitted rejection reaches the
// fallback like the call's own errors. levee answers its own rejections like any error.
func TestRuleRejectionByAnOpenBreakerReachesTheFallback(t *testing.T) {
	f := labelled(t,
		fallback.OnType(func(context.Context, rejection) (Money, error) { return Money{Cents: 1999, Stale: true}, nil }),
		fallback.OnAny(fallback.Value(Money{})))
	m, out, err := fallback.ExecuteOutcome(context.Background(), f, failing[Money](fmt.Errorf("pricing: %w", rejection{})))
	require.NoError(t, err)
	assert.Equal(t, Money{Cents: 1999, Stale: true}, m)
	assert.True(t, out.Fallback)
}

// Resilience4j: with a single candidate that does not match the exception, the original is
// rethrown. levee: the very same error value comes back, and the use is counted as unhandled.
func TestRuleLoneNonMatchingHandlerReturnsTheOriginal(t *testing.T) {
	f := labelled(t, fallback.OnError(errNotFound, fallback.Value(0)))
	cause := fmt.Errorf("x: %w", errBoom)
	_, err := fallback.Execute(context.Background(), f, failing[int](cause))
	assert.True(t, err == cause)
	assert.Equal(t, fallback.Metrics{NumberOfUnhandledErrors: 1}, f.Metrics())
}

// Resilience4j: with several candidates the closest exception class wins (walking
// superclasses). levee: the closest link of the chain wins (walking wrappers outward-in).
func TestRuleClosestExceptionTypeWins(t *testing.T) {
	f := labelled(t,
		fallback.OnAny(func(context.Context, error) (string, error) { return "Exception", nil }),
		fallback.OnType(func(context.Context, *GatewayError) (string, error) { return "GatewayError", nil }),
		fallback.OnError(errBoom, func(context.Context, error) (string, error) { return "boom", nil }),
	)
	for cause, want := range map[error]string{
		&GatewayError{Err: errBoom}:                    "GatewayError",
		fmt.Errorf("a: %w", errBoom):                   "boom",
		fmt.Errorf("a: %w", &GatewayError{}):           "GatewayError",
		errors.New("anything else"):                    "Exception",
		fmt.Errorf("a: %w", &isError{target: errBoom}): "boom",
	} {
		v, err := fallback.Execute(context.Background(), f, failing[string](cause))
		require.NoError(t, err)
		assert.Equal(t, want, v, "cause %v", cause)
	}
}
