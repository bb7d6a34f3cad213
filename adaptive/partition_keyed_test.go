package adaptive_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/levee-go/levee/adaptive"
)

func TestKeyedConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		cfg  adaptive.KeyedConfig
		want string
	}{
		{adaptive.KeyedConfig{MaxKeys: -1}, "adaptive: MaxKeys must be in [1, 1048576], got -1"},
		{adaptive.KeyedConfig{RejectionDelay: -time.Second}, "adaptive: RejectionDelay must be >= 0, got -1s"},
		{adaptive.KeyedConfig{MaxDelayedCalls: -1}, "adaptive: MaxDelayedCalls must be >= 0, got -1"},
		{adaptive.KeyedConfig{Config: adaptive.Config{MaxQueued: 1}}, "adaptive: MaxQueued must be 0 for a PartitionedLimiter, got 1"},
	} {
		l, err := adaptive.NewKeyed("x", tc.cfg)
		assert.Nil(t, l)
		assert.EqualError(t, err, tc.want)
	}
}

// Three tenants share a limit of 9: a noisy one fills it alone, the others, when they come,
// get their 3 each, and the noisy one gets no more until it is back under its share; a
// tenant is forgotten with its last call.
func TestKeyedFairShares(t *testing.T) {
	l, err := adaptive.NewKeyed("tenants", adaptive.KeyedConfig{Config: fixed(9), MaxKeys: 3})
	require.NoError(t, err)
	var noisy []adaptive.Permit
	for range 9 {
		p, err := l.AcquirePartition(context.Background(), "noisy")
		require.NoError(t, err)
		noisy = append(noisy, p)
	}
	_, err = l.AcquirePartition(context.Background(), "noisy")
	assert.ErrorIs(t, err, adaptive.ErrLimitExceeded)
	var quiet []adaptive.Permit
	for _, tenant := range []string{"a", "a", "a", "b", "b", "b"} {
		p, err := l.AcquirePartition(context.Background(), tenant)
		require.NoError(t, err, tenant)
		quiet = append(quiet, p)
	}
	_, err = l.AcquirePartition(context.Background(), "a")
	assert.ErrorIs(t, err, adaptive.ErrLimitExceeded, "a has its 3")
	_, err = l.AcquirePartition(context.Background(), "c")
	assert.ErrorIs(t, err, adaptive.ErrLimitExceeded, "a fourth key beyond MaxKeys 3, the limit full")
	assert.Equal(t, adaptive.KeyedMetrics{Limit: 9, InFlight: 15, Keys: 3, Share: 3, KeysRefused: 1, Refused: 2}, l.KeyedMetrics())
	for _, p := range noisy[:7] {
		p.OnIgnore()
	}
	p, err := l.AcquirePartition(context.Background(), "noisy")
	require.NoError(t, err, "8 in flight of 9: the limit has room")
	_, err = l.AcquirePartition(context.Background(), "noisy")
	assert.ErrorIs(t, err, adaptive.ErrLimitExceeded, "9 in flight, noisy at its share of 3")
	for _, p := range append(append(noisy[7:], quiet...), p) {
		p.OnIgnore()
	}
	assert.Equal(t, adaptive.KeyedMetrics{Limit: 9, Keys: 0, Share: 9, KeysRefused: 1, Refused: 3}, l.KeyedMetrics())
}

// The fair-share property over random sequences on random keys: a key below its share is
// never refused, a key at or past it only while the limit is full, and keys are held only
// while they have calls in flight.
func TestKeyedFairShareProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		limit := rapid.IntRange(1, 20).Draw(t, "limit")
		maxKeys := rapid.IntRange(1, 6).Draw(t, "maxKeys")
		l, err := adaptive.NewKeyed("tenants", adaptive.KeyedConfig{Config: fixed(limit), MaxKeys: maxKeys})
		if err != nil {
			t.Fatal(err)
		}
		held := map[string][]adaptive.Permit{}
		total := 0
		for range rapid.IntRange(1, 200).Draw(t, "steps") {
			key := fmt.Sprint("t", rapid.IntRange(0, 7).Draw(t, "key"))
			if rapid.Bool().Draw(t, "acquire") {
				keys := len(held)
				if len(held[key]) == 0 {
					keys++
				}
				share := max(1, (limit+keys-1)/keys)
				_, exists := held[key]
				allowed := (exists || keys <= maxKeys || total < limit) && (total < limit || len(held[key]) < share)
				p, err := l.AcquirePartition(context.Background(), key)
				if allowed != (err == nil) {
					t.Fatalf("%s with %d of share %d, %d of %d in flight, %d keys: err %v", key, len(held[key]), share, total, limit, len(held), err)
				}
				if err == nil {
					held[key] = append(held[key], p)
					total++
				}
			} else if ps := held[key]; len(ps) > 0 {
				ps[len(ps)-1].OnSuccess()
				if len(ps) == 1 {
					delete(held, key)
				} else {
					held[key] = ps[:len(ps)-1]
				}
				total--
			}
			m := l.KeyedMetrics()
			if m.Keys != len(held) || m.InFlight != total {
				t.Fatalf("metrics %+v, model %d keys %d in flight", m, len(held), total)
			}
		}
	})
}

func TestPartitionedMaxKeys(t *testing.T) {
	k, err := adaptive.NewKeyed("tenants", adaptive.KeyedConfig{MaxKeys: 3})
	require.NoError(t, err)
	assert.Equal(t, 3, k.MaxKeys())
	assert.True(t, k.IsKeyed())
	p, err := adaptive.NewPartitioned("tenants", adaptive.PartitionedConfig{})
	require.NoError(t, err)
	assert.Zero(t, p.MaxKeys())
	assert.False(t, p.IsKeyed())
	var nl *adaptive.PartitionedLimiter
	assert.Zero(t, nl.MaxKeys())
	assert.False(t, nl.IsKeyed())
	var np *adaptive.Prioritizer
	assert.Zero(t, np.RejectionThreshold())
}
