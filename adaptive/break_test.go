package adaptive_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/adaptive"
)

// A nil *PrioritizedLimiter answers as its NotifyRelease does, without a panic: Admit returns
// ErrNilLimiter and RetryAfter 0.
func TestNilPrioritizedLimiterDoesNotPanic(t *testing.T) {
	var pl *adaptive.PrioritizedLimiter
	assert.NotPanics(t, func() {
		permit, err := pl.Admit(context.Background())
		assert.Nil(t, permit)
		assert.ErrorIs(t, err, adaptive.ErrNilLimiter)
	})
	assert.NotPanics(t, func() { assert.Zero(t, pl.RetryAfter()) })
}

// PartitionedConfig promises that MaxWaitDuration, like MaxQueued, must be zero: a partitioned
// limiter queues nobody, so a wait set there would be silently ignored.
func TestPartitionedRefusesMaxWaitDuration(t *testing.T) {
	_, err := adaptive.NewPartitioned("tenants", adaptive.PartitionedConfig{Config: adaptive.Config{MaxWaitDuration: 5 * time.Second}})
	require.Error(t, err)
	assert.EqualError(t, err, "adaptive: MaxWaitDuration must be 0 for a PartitionedLimiter, got 5s")
	_, err = adaptive.NewKeyed("tenants", adaptive.KeyedConfig{Config: adaptive.Config{MaxWaitDuration: 5 * time.Second}})
	assert.EqualError(t, err, "adaptive: MaxWaitDuration must be 0 for a PartitionedLimiter, got 5s")
	_, err = adaptive.NewPartitioned("tenants", adaptive.PartitionedConfig{})
	assert.NoError(t, err)
}
