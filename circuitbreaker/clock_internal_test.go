package circuitbreaker

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// frozenClock returns a breaker on the real clock whose shared start reading is stored by
// the test and never retired: its timer is stopped, so what Acquire and Execute do with the
// reading is deterministic.
func frozenClock(t *testing.T, cfg Config) *CircuitBreaker {
	t.Helper()
	b, err := New("clock", cfg)
	require.NoError(t, err)
	require.NotNil(t, b.calls.timer, "a breaker outside a synctest bubble shares its readings")
	b.calls.timer.Stop()
	b.epoch = b.epoch.Add(-time.Hour) // an hour of history: readings up to an hour old are representable
	return b
}

// TestCallClockStartsFromTheSharedReading: with the default 60 s threshold a call starts from
// the shared reading; its duration is measured from it, so it is never shorter than the call,
// and it decides the slow-call judgement.
func TestCallClockStartsFromTheSharedReading(t *testing.T) {
	b := frozenClock(t, Config{SlidingWindowSize: 10, SlowCallDurationThreshold: time.Second})
	before := b.now()
	shared := before - 2*time.Second // a reading two seconds old, as if the timer were very late
	b.calls.reading.Store(int64(shared))
	p, err := b.Acquire()
	require.NoError(t, err)
	assert.Equal(t, shared, p.start, "the permit starts at the shared reading")
	p.OnSuccess()
	m := b.Metrics()
	assert.Equal(t, 1, m.NumberOfSlowCalls, "measured from the shared reading, the call took more than 2 s")
	assert.GreaterOrEqual(t, m.TotalDuration, 2*time.Second)

	// The end refreshed the reading, which was more than coarseRefresh old.
	assert.GreaterOrEqual(t, time.Duration(b.calls.reading.Load()), before)

	_, err = Execute(context.Background(), b, func(context.Context) (int, error) { return 1, nil })
	require.NoError(t, err)
	assert.Equal(t, 1, b.Metrics().NumberOfSlowCalls, "a call starting from the refreshed reading is not slow")
}

// TestCallClockReadsBothEndsBelowOneSecond: a threshold below coarseMinThreshold, an event
// consumer, or a breaker created in a synctest bubble time every call from its own reading,
// and leave the shared reading alone.
func TestCallClockReadsBothEndsBelowOneSecond(t *testing.T) {
	b := frozenClock(t, Config{SlowCallDurationThreshold: time.Second - 1})
	b.calls.reading.Store(int64(b.now() - time.Minute))
	p, err := b.Acquire()
	require.NoError(t, err)
	assert.Greater(t, p.start, b.now()-time.Minute+time.Second)
	p.OnSuccess()
	assert.Equal(t, 0, b.Metrics().NumberOfSlowCalls)

	c := frozenClock(t, Config{})
	stale := c.now() - time.Minute
	c.calls.reading.Store(int64(stale))
	ev := make(chan time.Duration, 1)
	unsubscribe := c.Subscribe(func(e Event) { ev <- e.Duration })
	q, err := c.Acquire()
	require.NoError(t, err)
	assert.Greater(t, q.start, stale, "a consumer sees exact durations")
	q.OnSuccess()
	assert.Less(t, <-ev, time.Minute)
	unsubscribe()

	synctest.Test(t, func(t *testing.T) {
		d, err := New("bubble", Config{})
		require.NoError(t, err)
		assert.Nil(t, d.calls.timer)
		assert.False(t, d.state.Load().coarse)
		p, err := d.Acquire()
		require.NoError(t, err)
		time.Sleep(time.Minute)
		p.OnSuccess()
		assert.Equal(t, int64(-1), d.calls.reading.Load())
		assert.Equal(t, time.Minute, d.Metrics().TotalDuration)
	})
}

// TestCallClockRetiresItsReading: the first call stores its reading and arms the timer, which
// retires the reading coarseGrain later (on a loaded machine, eventually); the next call reads
// the clock again.
func TestCallClockRetiresItsReading(t *testing.T) {
	b, err := New("clock", Config{})
	require.NoError(t, err)
	assert.True(t, b.state.Load().coarse)
	assert.Equal(t, int64(-1), b.calls.reading.Load())
	p, err := b.Acquire()
	require.NoError(t, err)
	r := b.calls.reading.Load()
	assert.True(t, r == int64(p.start) || r == -1, "the first start is shared until the timer retires it, got %d for %d", r, p.start)
	p.OnSuccess()
	require.Eventually(t, func() bool { return b.calls.reading.Load() == -1 }, 10*time.Second, time.Millisecond)
	before := b.now()
	q, err := b.Acquire()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, q.start, before, "a retired reading is not used")
	q.Release()
}
