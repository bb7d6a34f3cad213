package retry_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/internal/zerocheck"
	"github.com/levee-go/levee/retry"
)

// The zero value of a *Retry, used without New, answers every exported method and function
// exactly as a nil *Retry does, without panicking.
func TestZeroRetryAnswersAsNil(t *testing.T) {
	var nilPtr *retry.Retry
	zero := &retry.Retry{}
	assert.Positive(t, zerocheck.Methods(t, nilPtr, zero))
	zerocheck.Func(t, "Execute", retry.Execute[int], 1, nilPtr, zero)
	zerocheck.Func(t, "ExecuteExpecting", retry.ExecuteExpecting[int], 1, nilPtr, zero)
}
