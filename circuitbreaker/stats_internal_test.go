package circuitbreaker

import (
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
