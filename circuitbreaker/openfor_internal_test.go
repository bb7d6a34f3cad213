package circuitbreaker

import (
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpenForMostNegativeWaitEndsAtOnce: TransitionToOpenStateFor(math.MinInt64), and
// TransitionToOpenStateUntil(time.Time{}) or OpenUntil(time.Time{}) (time.Until saturates to
// math.MinInt64), must end the wait at once. The deadline used to be now+math.MinInt64, so
// deadline-now, read a moment later by the OPEN period, overflowed to ~292 years: the period
// took itself for far from its end and refused every call without reading the clock, for ever.
// The public methods read the clock twice in the same instant of a synctest bubble, so the
// moment between the two readings is made explicit here.
func TestOpenForMostNegativeWaitEndsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb, err := New("openfor", Config{})
		require.NoError(t, err)
		time.Sleep(time.Hour)
		deadline := cb.after(math.MinInt64)
		assert.Equal(t, time.Hour-1, deadline)
		time.Sleep(time.Nanosecond) // the OPEN period reads the clock after the deadline was set
		cur := cb.state.Load()
		require.True(t, cb.swap(cur, cb.newOpen(cur.attempts, cur.metrics, deadline)))
		assert.True(t, cb.state.Load().ending.Load(), "the wait is over: refusals must read the clock")
		p, err := cb.Acquire()
		require.NoError(t, err)
		assert.Equal(t, HalfOpen, cb.State())
		p.Release()
	})
}
