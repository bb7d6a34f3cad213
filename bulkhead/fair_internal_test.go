package bulkhead

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A permit can be free while someone waits only for an instant (between a release and the
// hand-off to the queue). That instant is set up here by hand: in fair mode a newcomer steps
// aside for the waiter; with DisableFairCallHandling it barges in, as Java's unfair semaphore.
func TestNewcomerBargesOnlyWithoutFairCallHandling(t *testing.T) {
	for _, tt := range []struct {
		disableFair bool
		want        bool
	}{{false, false}, {true, true}} {
		b, err := New("x", Config{MaxConcurrentCalls: 1, DisableFairCallHandling: tt.disableFair})
		require.NoError(t, err)
		b.waiting.Store(1)
		assert.Equal(t, tt.want, b.TryAcquire(), "DisableFairCallHandling=%v", tt.disableFair)
	}
}

// ChangeConfig switches fairness for the callers that arrive after it.
func TestChangeConfigOfFairnessAppliesToNewcomers(t *testing.T) {
	b, err := New("x", Config{MaxConcurrentCalls: 1})
	require.NoError(t, err)
	b.waiting.Store(1)
	assert.False(t, b.TryAcquire(), "fair: steps aside")
	require.NoError(t, b.ChangeConfig(Config{MaxConcurrentCalls: 1, DisableFairCallHandling: true}))
	assert.True(t, b.TryAcquire(), "unfair: barges in")
	b.ReleasePermission()
	require.NoError(t, b.ChangeConfig(Config{MaxConcurrentCalls: 1}))
	assert.False(t, b.TryAcquire(), "fair again")
	b.waiting.Store(0)
	assert.True(t, b.TryAcquire())
}
