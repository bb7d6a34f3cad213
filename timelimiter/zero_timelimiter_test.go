package timelimiter_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/internal/zerocheck"
	"github.com/levee-go/levee/timelimiter"
)

// The zero value of a *TimeLimiter, used without New, answers every exported method and function
// exactly as a nil *TimeLimiter does, without panicking.
func TestZeroTimeLimiterAnswersAsNil(t *testing.T) {
	var nilPtr *timelimiter.TimeLimiter
	zero := &timelimiter.TimeLimiter{}
	assert.Positive(t, zerocheck.Methods(t, nilPtr, zero))
	zerocheck.Func(t, "Execute", timelimiter.Execute[int], 1, nilPtr, zero)
}
