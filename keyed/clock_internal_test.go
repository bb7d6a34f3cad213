package keyed

import (
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Outside a synctest bubble, Gets share one clock reading for up to a millisecond and record a
// key's last use a millisecond after it: never before the truth, so a key is never evicted
// before IdleTimeout after its last Get, and at most about a millisecond after. The bubble's
// fake clock shows it exactly once the Keyed is given the timer it has outside one.
func TestGetsShareAClockReading(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k, err := New(Config{MaxKeys: 10, IdleTimeout: time.Second}, func(key string) (string, error) {
			return key, nil
		})
		require.NoError(t, err)
		require.Nil(t, k.timer, "a bubble's Keyed reads the clock on every Get")
		k.timer = time.AfterFunc(time.Hour, func() { k.reading.Store(-1) })
		k.timer.Stop()
		start := time.Now()
		at := func() time.Duration { return time.Since(start) }

		_, err = k.Get("a") // a miss: created at 0
		require.NoError(t, err)
		_, err = k.Get("a") // reads the clock at 0 and shares the reading
		require.NoError(t, err)
		assert.Equal(t, int64(0), k.reading.Load())
		time.Sleep(500 * time.Microsecond)
		_, err = k.Get("a") // at 0.5 ms, from the reading of 0: last use recorded at 1 ms
		require.NoError(t, err)
		assert.Equal(t, int64(time.Millisecond), k.entries["a"].last.Load())
		time.Sleep(time.Millisecond)
		assert.Equal(t, int64(-1), k.reading.Load(), "the timer retired the reading at 1 ms")

		time.Sleep(time.Second - 1500*time.Microsecond + 999*time.Microsecond) // 1.000999 s
		assert.Zero(t, k.EvictIdle(), "used at 0.5 ms, recorded at 1 ms: kept at %v", at())
		time.Sleep(time.Microsecond) // 1.001 s
		assert.Equal(t, 1, k.EvictIdle(), "evicted 0.5 ms late, at %v", at())
	})
}

func TestIdleAtSaturates(t *testing.T) {
	assert.Equal(t, int64(3), idleAt(1, 2))
	assert.Equal(t, int64(math.MaxInt64), idleAt(1, math.MaxInt64))
	assert.Equal(t, int64(math.MaxInt64), idleAt(math.MaxInt64-1, 1))
}

// An IdleTimeout of centuries puts the next idle time at the end of time rather than
// overflowing into the past, where every Get would take the lock.
func TestLongIdleTimeoutKeepsTheLockFreePath(t *testing.T) {
	k, err := New(Config{MaxKeys: 4, IdleTimeout: math.MaxInt64}, func(key int) (int, error) { return key, nil })
	require.NoError(t, err)
	_, err = k.Get(1)
	require.NoError(t, err)
	assert.Equal(t, int64(math.MaxInt64), k.nextIdle.Load())
	assert.Zero(t, k.EvictIdle())
	assert.Equal(t, int64(math.MaxInt64), k.nextIdle.Load())
}
