package circuitbreaker

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// Only subscribers of per-call events make calls build their events and read the clock at
// both ends: a Logger, OnStateChange and SubscribeTypes without per-call types do not.
func TestOnlyPerCallSubscribersWantPerCallEvents(t *testing.T) {
	cb, err := New("test", Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	cb.OnStateChange(func(State, State) {})
	cb.SubscribeTypes(func(Event) {}, EventStateTransition, EventReset, EventNotPermitted,
		EventFailureRateExceeded, EventSlowCallRateExceeded)
	assert.True(t, cb.events.Active())
	assert.False(t, cb.events.Wants(callEvents))
	st := cb.state.Load()
	require.True(t, st.coarse, "the default threshold judges from a shared start")

	for _, typ := range []EventType{EventSuccess, EventError, EventIgnoredError} {
		unsubscribe := cb.SubscribeTypes(func(Event) {}, typ)
		assert.True(t, cb.events.Wants(callEvents), typ)
		unsubscribe()
		assert.False(t, cb.events.Wants(callEvents), typ)
	}
	unsubscribe := cb.Subscribe(func(Event) {})
	assert.True(t, cb.events.Wants(callEvents))
	unsubscribe()
	assert.False(t, cb.events.Wants(callEvents))
}

// referenceMax is Micrometer's TimeWindowMax written plainly, the model windowMax is checked
// against: every sample goes into every bucket, a read rotates and gives the current one.
type referenceMax struct {
	lastRotate int64
	current    int
	buckets    [maxBuckets]int64
}

func (m *referenceMax) rotate(now int64) {
	elapsed := now - m.lastRotate
	if elapsed < int64(maxRotate) {
		return
	}
	if elapsed >= int64(maxExpiry) {
		m.buckets = [maxBuckets]int64{}
		m.current = 0
		m.lastRotate = now - elapsed%int64(maxRotate)
		return
	}
	for ; elapsed >= int64(maxRotate); elapsed -= int64(maxRotate) {
		m.buckets[m.current] = 0
		m.current = (m.current + 1) % maxBuckets
		m.lastRotate += int64(maxRotate)
	}
}

// TestWindowMaxMatchesTheReference checks windowMax, which skips a sample that the bucket
// emptied last already covers, against the plain model on random samples and reads spread over
// several rotations.
func TestWindowMaxMatchesTheReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var m windowMax
		var ref referenceMax
		var now time.Duration
		for i := range rapid.IntRange(1, 80).Draw(t, "steps") {
			now += time.Duration(rapid.Int64Range(0, int64(50*time.Second)).Draw(t, "advance"))
			if rapid.Bool().Draw(t, "read") {
				ref.rotate(int64(now))
				if got, want := m.poll(now), time.Duration(ref.buckets[ref.current]); got != want {
					t.Fatalf("step %d at %v: got %v, want %v", i, now, got, want)
				}
				continue
			}
			v := time.Duration(rapid.Int64Range(0, int64(10*time.Second)).Draw(t, "sample"))
			m.record(now, v)
			ref.rotate(int64(now))
			for j := range ref.buckets {
				ref.buckets[j] = max(ref.buckets[j], int64(v))
			}
		}
	})
}
