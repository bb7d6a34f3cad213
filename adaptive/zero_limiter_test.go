package adaptive_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/internal/zerocheck"
)

// The zero value of a *Limiter, used without New, answers every exported method and function
// exactly as a nil *Limiter does, without panicking.
func TestZeroLimiterAnswersAsNil(t *testing.T) {
	var nilPtr *adaptive.Limiter
	zero := &adaptive.Limiter{}
	assert.Positive(t, zerocheck.Methods(t, nilPtr, zero))
	zerocheck.Func(t, "Execute", adaptive.Execute[int], 1, nilPtr, zero)
	zerocheck.Func(t, "Decorator", adaptive.Decorator[int], 0, nilPtr, zero)
	zerocheck.Func(t, "PrioritizedDecorator", adaptive.PrioritizedDecorator[int], 1, nilPtr, zero)
	zerocheck.Func(t, "ExecutePrioritized", adaptive.ExecutePrioritized[int], 2, nilPtr, zero)
}
