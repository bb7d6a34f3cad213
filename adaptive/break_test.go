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

// MaxKeys bounds the keys only while the limit is full: below it a key beyond MaxKeys borrows
// idle capacity, so the keys held reach max(MaxKeys, limit), as the doc now says (it promised
// MaxKeys keys at most).
func TestKeyedKeysBeyondMaxKeysBorrowBelowTheLimit(t *testing.T) {
	l, err := adaptive.NewKeyed("tenants", adaptive.KeyedConfig{Config: fixed(3), MaxKeys: 1})
	require.NoError(t, err)
	var held []adaptive.Permit
	for _, key := range []string{"a", "b", "c"} {
		p, err := l.AcquirePartition(context.Background(), key)
		require.NoError(t, err, key)
		held = append(held, p)
	}
	assert.Equal(t, 3, l.KeyedMetrics().Keys, "max(MaxKeys 1, limit 3)")
	_, err = l.AcquirePartition(context.Background(), "d")
	assert.ErrorIs(t, err, adaptive.ErrLimitExceeded, "the limit full: no key beyond MaxKeys")
	for _, p := range held {
		p.OnIgnore()
	}
	assert.Zero(t, l.KeyedMetrics().Keys)
}
