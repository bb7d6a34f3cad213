package circuitbreaker_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/circuitbreaker"
)

// TestBreakerCreatedOutsideBubbleLeavesOpenState: a breaker created outside a
// testing/synctest bubble (a test fixture, a package-level variable) and used inside one reads
// a clock that runs from before its epoch, so its instants are negative. Its OPEN wait must
// still end after WaitDurationInOpenState: the saturation guard of the wait's deadline
// overflowed for a negative now and made the wait endless.
func TestBreakerCreatedOutsideBubbleLeavesOpenState(t *testing.T) {
	cb, err := circuitbreaker.New("outside", circuitbreaker.Config{
		SlidingWindowSize: 2, MinimumNumberOfCalls: 2, WaitDurationInOpenState: time.Second,
	})
	require.NoError(t, err)
	synctest.Test(t, func(t *testing.T) {
		for range 2 {
			p, err := cb.Acquire()
			require.NoError(t, err)
			p.OnError(errors.New("boom"))
		}
		require.Equal(t, circuitbreaker.Open, cb.State())
		time.Sleep(2 * time.Second)
		p, err := cb.Acquire()
		require.NoError(t, err, "the OPEN wait of 1s is over after 2s")
		assert.Equal(t, circuitbreaker.HalfOpen, cb.State())
		p.OnSuccess()
	})
}
