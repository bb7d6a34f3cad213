package bulkhead_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/internal/zerocheck"
)

// The zero value of a Bulkhead, like nil, is not usable: it never panics, and answers every
// exported method and function as a nil *Bulkhead does.
func TestZeroBulkheadAnswersAsNil(t *testing.T) {
	var nilPtr *bulkhead.Bulkhead
	zero := &bulkhead.Bulkhead{}
	assert.Positive(t, zerocheck.Methods(t, nilPtr, zero))
	zerocheck.Func(t, "Execute", bulkhead.Execute[int], 1, nilPtr, zero)
	assert.False(t, zero.TryAcquire())
	assert.Equal(t, bulkhead.Metrics{}, zero.Metrics())
}
