package throttle_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/internal/zerocheck"
	"github.com/levee-go/levee/throttle"
)

// The zero value of a *Throttler, used without New, answers every exported method and function
// exactly as a nil *Throttler does, without panicking.
func TestZeroThrottlerAnswersAsNil(t *testing.T) {
	var nilPtr *throttle.Throttler
	zero := &throttle.Throttler{}
	assert.Positive(t, zerocheck.Methods(t, nilPtr, zero))
	zerocheck.Func(t, "Execute", throttle.Execute[int], 1, nilPtr, zero)
	zerocheck.Func(t, "Decorator", throttle.Decorator[int], 0, nilPtr, zero)
}
