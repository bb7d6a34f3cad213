package keyed_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/keyed"
)

// With MaxKeys 160 recency is kept to within 10 keys: a Get of a key among the 10 most recently
// stamped does not restamp it, and a Get of any other key does. Below 16 keys it is exact
// (TestLeastRecentlyUsedGoesFirst, TestMatchesAReferenceLRU).
func TestRecencyIsKeptToWithinMaxKeysOver16(t *testing.T) {
	for _, tc := range []struct {
		name    string
		hit     int // a key hit before all the keys below it are hit again
		evicted string
	}{
		// Key 100 is 59 stamps old when hit again: restamped, and key 156, the least recently
		// used, goes first.
		{"outside the window", 100, "156"},
		// Key 155 is 4 stamps old: it keeps its stamp and goes before 156 to 159, which were
		// used before it. That is the imprecision the window allows: 4 keys of 160.
		{"inside the window", 155, "155"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := keyed.New(keyed.Config{MaxKeys: 160, IdleTimeout: keyed.NoIdleTimeout}, func(key int) (string, error) {
				return strconv.Itoa(key), nil
			})
			require.NoError(t, err)
			var evicted []string
			k.Subscribe(func(e keyed.Eviction[int, string]) { evicted = append(evicted, e.Value) })
			for i := range 160 {
				_, err := k.Get(i)
				require.NoError(t, err)
			}
			_, err = k.Get(tc.hit)
			require.NoError(t, err)
			for i := range 156 {
				if i != tc.hit {
					_, err := k.Get(i)
					require.NoError(t, err)
				}
			}
			_, err = k.Get(160)
			require.NoError(t, err)
			assert.Equal(t, []string{tc.evicted}, evicted)
			assert.Equal(t, keyed.Metrics{Keys: 160, Hits: 156, Misses: 161, Created: 161, EvictedCapacity: 1}, k.Metrics())
		})
	}
}

// A key created since the last snapshot is found under the lock until the snapshot is made
// again; either way a Get is a hit, counted once, and allocates nothing.
func TestHitsAreCountedOnceOnEitherPath(t *testing.T) {
	k, err := keyed.New(keyed.Config{MaxKeys: 100, IdleTimeout: keyed.NoIdleTimeout}, func(key int) (int, error) {
		return key * 2, nil
	})
	require.NoError(t, err)
	for i := range 50 {
		_, err := k.Get(i)
		require.NoError(t, err)
	}
	for round := range 3 {
		for i := range 50 {
			v, err := k.Get(i)
			require.NoError(t, err)
			require.Equal(t, i*2, v, "round %d", round)
		}
	}
	assert.Equal(t, keyed.Metrics{Keys: 50, Hits: 150, Misses: 50, Created: 50}, k.Metrics())
	i := 0
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		i++
		if _, err := k.Get(i % 50); err != nil {
			t.Fatal(err)
		}
	}))
	assert.Equal(t, uint64(150+1001), k.Metrics().Hits)
	k.Clear()
	assert.Equal(t, keyed.Metrics{Hits: 1151, Misses: 50, Created: 50, Removed: 50}, k.Metrics(), "the hits of evicted keys stay counted")
	v, err := k.Get(3)
	require.NoError(t, err)
	assert.Equal(t, 6, v)
	assert.Equal(t, fmt.Sprint(keyed.Metrics{Keys: 1, Hits: 1151, Misses: 51, Created: 51, Removed: 50}), fmt.Sprint(k.Metrics()), "a cleared key is created again, not found in the old snapshot")
}
