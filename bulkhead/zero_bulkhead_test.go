package bulkhead_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/internal/zerocheck"
)

// Unlike the other patterns, the zero value of a Bulkhead is usable without New: it answers
// every exported method and function exactly as a bulkhead New("", DefaultConfig()) does, and
// never as a nil *Bulkhead.
func TestZeroBulkheadAnswersAsDefault(t *testing.T) {
	def, err := bulkhead.New("", bulkhead.DefaultConfig())
	require.NoError(t, err)
	zero := &bulkhead.Bulkhead{}
	assert.Positive(t, zerocheck.Methods(t, def, zero))
	zerocheck.Func(t, "Execute", bulkhead.Execute[int], 1, def, zero)
	assert.Equal(t, def.Metrics(), zero.Metrics(), "the sweep left both in the same state")

}
