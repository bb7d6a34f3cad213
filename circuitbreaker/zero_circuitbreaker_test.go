package circuitbreaker_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/internal/zerocheck"
)

// The zero value of a *CircuitBreaker, used without New, answers every exported method and function
// exactly as a nil *CircuitBreaker does, without panicking.
func TestZeroCircuitBreakerAnswersAsNil(t *testing.T) {
	var nilPtr *circuitbreaker.CircuitBreaker
	zero := &circuitbreaker.CircuitBreaker{}
	assert.Positive(t, zerocheck.Methods(t, nilPtr, zero))
	zerocheck.Func(t, "Execute", circuitbreaker.Execute[int], 1, nilPtr, zero)
}
