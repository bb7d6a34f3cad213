package ratelimiter_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/internal/zerocheck"
	"github.com/levee-go/levee/ratelimiter"
)

// The zero value of a *RateLimiter, used without New, answers every exported method and function
// exactly as a nil *RateLimiter does, without panicking.
func TestZeroRateLimiterAnswersAsNil(t *testing.T) {
	var nilPtr *ratelimiter.RateLimiter
	zero := &ratelimiter.RateLimiter{}
	assert.Positive(t, zerocheck.Methods(t, nilPtr, zero))
	zerocheck.Func(t, "Execute", ratelimiter.Execute[int], 1, nilPtr, zero)
}
