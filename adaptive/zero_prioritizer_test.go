package adaptive_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/internal/zerocheck"
)

// The zero value of a *Prioritizer, used without New, answers every exported method and function
// exactly as a nil *Prioritizer does, without panicking.
func TestZeroPrioritizerAnswersAsNil(t *testing.T) {
	var nilPtr *adaptive.Prioritizer
	zero := &adaptive.Prioritizer{}
	assert.Positive(t, zerocheck.Methods(t, nilPtr, zero))
	zerocheck.Func(t, "PrioritizedDecorator", adaptive.PrioritizedDecorator[int], 0, nilPtr, zero)
	zerocheck.Func(t, "ExecutePrioritized", adaptive.ExecutePrioritized[int], 1, nilPtr, zero)
}
