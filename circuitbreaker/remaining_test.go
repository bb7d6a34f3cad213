package circuitbreaker_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cb "github.com/levee-go/levee/circuitbreaker"
)

// RemainingWaitInOpenState counts down an OPEN wait to the first instant Acquire permits,
// 1ns past its end, and is 0 in every other state.
func TestRemainingWaitInOpenState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, cb.Config{WaitDurationInOpenState: 10 * time.Second})
		assert.Equal(t, time.Duration(0), b.RemainingWaitInOpenState()) // CLOSED
		require.NoError(t, b.TransitionToOpenState())
		assert.Equal(t, 10*time.Second+1, b.RemainingWaitInOpenState())
		time.Sleep(4 * time.Second)
		assert.Equal(t, 6*time.Second+1, b.RemainingWaitInOpenState())
		time.Sleep(6 * time.Second)
		assert.Equal(t, time.Duration(1), b.RemainingWaitInOpenState())
		_, err := b.Acquire()
		require.ErrorIs(t, err, cb.ErrCallNotPermitted) // not yet strictly after the end
		time.Sleep(1)
		assert.Equal(t, time.Duration(0), b.RemainingWaitInOpenState())
		assert.Equal(t, cb.Open, b.State()) // reading it moved nothing
		p, err := b.Acquire()
		require.NoError(t, err)
		p.Release()
		assert.Equal(t, cb.HalfOpen, b.State())
		assert.Equal(t, time.Duration(0), b.RemainingWaitInOpenState())
		require.NoError(t, b.TransitionToForcedOpenState())
		assert.Equal(t, time.Duration(0), b.RemainingWaitInOpenState())
		var nilBreaker *cb.CircuitBreaker
		assert.Equal(t, time.Duration(0), nilBreaker.RemainingWaitInOpenState())
	})
}
