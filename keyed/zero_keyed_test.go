package keyed_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/internal/zerocheck"
	"github.com/levee-go/levee/keyed"
)

// The zero value of a *Keyed, used without New, answers every exported method and function
// exactly as a nil *Keyed does, without panicking; Get returns ErrNilKeyed.
func TestZeroKeyedAnswersAsNil(t *testing.T) {
	var nilPtr *keyed.Keyed[string, int]
	zero := &keyed.Keyed[string, int]{}
	assert.Positive(t, zerocheck.Methods(t, nilPtr, zero))
	zerocheck.Func(t, "CountBy", keyed.CountBy[string, int, int], 0, nilPtr, zero)

	_, err := zero.Get("payment")
	require.ErrorIs(t, err, keyed.ErrNilKeyed)
	assert.Equal(t, "keyed: nil or zero *Keyed (create one with keyed.New)", err.Error())
	assert.Equal(t, keyed.Metrics{}, zero.Metrics())
	assert.False(t, zero.Remove("payment"))
	assert.Zero(t, zero.EvictIdle())
	for range zero.All() {
		t.Fatal("a zero Keyed holds no key")
	}

	var breakers keyed.Keyed[string, *circuitbreaker.CircuitBreaker]
	states := keyed.CircuitBreakerStates(&breakers)
	assert.Equal(t, 0, states[circuitbreaker.Open])
	_, err = keyed.CircuitBreakers(&breakers, func(context.Context) string { return "host" }).Admit(t.Context())
	require.ErrorIs(t, err, keyed.ErrNilKeyed)

	for _, ps := range []*keyed.Pipelines[string, int]{nil, {}} {
		_, err = ps.Get("payment")
		require.ErrorIs(t, err, keyed.ErrNilKeyed)
		_, err = ps.Patterns("payment")
		require.ErrorIs(t, err, keyed.ErrNilKeyed)
		assert.Equal(t, keyed.Metrics{}, ps.Metrics())
		assert.Equal(t, keyed.Config{}, ps.Config())
		for range ps.All() {
			t.Fatal("a zero Pipelines holds no key")
		}
	}
}
