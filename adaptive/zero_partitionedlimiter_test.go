package adaptive_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/internal/zerocheck"
)

// The zero value of a *PartitionedLimiter, used without New, answers every exported method and function
// exactly as a nil *PartitionedLimiter does, without panicking.
func TestZeroPartitionedLimiterAnswersAsNil(t *testing.T) {
	var nilPtr *adaptive.PartitionedLimiter
	zero := &adaptive.PartitionedLimiter{}
	assert.Positive(t, zerocheck.Methods(t, nilPtr, zero))
	zerocheck.Func(t, "ExecutePartitioned", adaptive.ExecutePartitioned[int], 1, nilPtr, zero)
	zerocheck.Func(t, "PartitionedDecorator", adaptive.PartitionedDecorator[int], 0, nilPtr, zero)
}
