package keyed_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/keyed"
)

const nanReason = "it is or holds a NaN, which never equals itself, so it could never be found again"

// A NaN key could never be found again: it is refused, with nothing stored and create not
// called, so that MaxKeys still bounds memory, and the metrics count it nowhere.
func TestNaNKeyIsRefused(t *testing.T) {
	created := 0
	k, err := keyed.New(keyed.Config{MaxKeys: 2}, func(float64) (int, error) { created++; return 1, nil })
	require.NoError(t, err)
	_, err = k.Get(1)
	require.NoError(t, err)
	for range 1000 {
		v, err := k.Get(math.NaN())
		assert.Zero(t, v)
		require.EqualError(t, err, "keyed: key of type float64 refused: "+nanReason)
		assert.ErrorIs(t, err, keyed.ErrKeyNotComparable)
		var ke *keyed.KeyError
		require.ErrorAs(t, err, &ke)
		assert.Equal(t, keyed.KeyError{Type: "float64", Reason: nanReason}, *ke)
		assert.False(t, levee.IsRejection(err))
	}
	assert.False(t, k.Remove(math.NaN()))
	assert.Equal(t, 1, created)
	assert.Equal(t, keyed.Metrics{Keys: 1, Misses: 1, Created: 1}, k.Metrics())
	_, err = k.Get(1)
	require.NoError(t, err)
	assert.Equal(t, keyed.Metrics{Keys: 1, Hits: 1, Misses: 1, Created: 1}, k.Metrics())
}

type point struct{ X, Y float32 }

// A NaN inside a struct, an array or an interface is refused as well; the same types without a
// NaN are ordinary keys.
func TestKeysHoldingNaNAreRefused(t *testing.T) {
	nan32 := float32(math.NaN())
	t.Run("struct", func(t *testing.T) {
		k, err := keyed.New(keyed.Config{MaxKeys: 2}, func(point) (int, error) { return 1, nil })
		require.NoError(t, err)
		_, err = k.Get(point{1, nan32})
		assert.EqualError(t, err, "keyed: key of type keyed_test.point refused: "+nanReason)
		_, err = k.Get(point{1, 2})
		require.NoError(t, err)
		assert.Equal(t, keyed.Metrics{Keys: 1, Misses: 1, Created: 1}, k.Metrics())
	})
	t.Run("array", func(t *testing.T) {
		k, err := keyed.New(keyed.Config{MaxKeys: 2}, func([2]float64) (int, error) { return 1, nil })
		require.NoError(t, err)
		_, err = k.Get([2]float64{0, math.NaN()})
		assert.EqualError(t, err, "keyed: key of type [2]float64 refused: "+nanReason)
		assert.Equal(t, keyed.Metrics{}, k.Metrics())
	})
	t.Run("complex", func(t *testing.T) {
		k, err := keyed.New(keyed.Config{MaxKeys: 2}, func(complex128) (int, error) { return 1, nil })
		require.NoError(t, err)
		_, err = k.Get(complex(1, math.NaN()))
		assert.EqualError(t, err, "keyed: key of type complex128 refused: "+nanReason)
		assert.Equal(t, keyed.Metrics{}, k.Metrics())
	})
	t.Run("interface", func(t *testing.T) {
		k, err := keyed.New(keyed.Config{MaxKeys: 2}, func(any) (int, error) { return 1, nil })
		require.NoError(t, err)
		for range 100 {
			_, err = k.Get(math.NaN())
			assert.EqualError(t, err, "keyed: key of type float64 refused: "+nanReason)
			_, err = k.Get(struct{ V any }{point{nan32, 0}})
			assert.EqualError(t, err, "keyed: key of type struct { V interface {} } refused: "+nanReason)
		}
		_, err = k.Get("a")
		require.NoError(t, err)
		_, err = k.Get(1.5)
		require.NoError(t, err)
		_, err = k.Get("a")
		require.NoError(t, err)
		assert.Equal(t, keyed.Metrics{Keys: 2, Hits: 1, Misses: 2, Created: 2}, k.Metrics())
	})
}

// A key whose dynamic value is not comparable cannot be a map key: Get refuses it instead of
// panicking, on the lock-free path and the locked one alike, and leaves k usable.
func TestUncomparableKeyIsRefused(t *testing.T) {
	const reason = "its value is not comparable, so it cannot be a map key"
	k, err := keyed.New(keyed.Config{MaxKeys: 2}, func(any) (int, error) { return 1, nil })
	require.NoError(t, err)
	_, err = k.Get([]int{1}) // the first Get: nothing held yet
	require.EqualError(t, err, "keyed: key of type []int refused: "+reason+" (runtime error: comparing uncomparable type []int)")
	assert.ErrorIs(t, err, keyed.ErrKeyNotComparable)
	_, err = k.Get("a")
	require.NoError(t, err)
	for range 100 { // the snapshot holds "a" now
		_, err = k.Get(map[string]int{})
		assert.ErrorIs(t, err, keyed.ErrKeyNotComparable)
		_, err = k.Get(struct{ F func() }{})
		assert.ErrorIs(t, err, keyed.ErrKeyNotComparable)
		_, err = k.Get([1]any{[]byte("x")})
		assert.ErrorIs(t, err, keyed.ErrKeyNotComparable)
	}
	assert.False(t, k.Remove([]int{1}))
	v, err := k.Get("a")
	require.NoError(t, err)
	assert.Equal(t, 1, v)
	assert.Equal(t, keyed.Metrics{Keys: 1, Hits: 1, Misses: 1, Created: 1}, k.Metrics())
	// The lock was released: Remove, Clear and All still work.
	assert.True(t, k.Remove("a"))
	k.Clear()
	assert.Equal(t, keyed.Metrics{Misses: 1, Created: 1, Hits: 1, Removed: 1}, k.Metrics())

	// A struct key with an interface field is checked too.
	type tagged struct {
		Name string
		Tag  any
	}
	ks, err := keyed.New(keyed.Config{}, func(tagged) (int, error) { return 2, nil })
	require.NoError(t, err)
	_, err = ks.Get(tagged{"a", []int{1}})
	assert.EqualError(t, err, "keyed: key of type keyed_test.tagged refused: "+reason+" (runtime error: comparing uncomparable type []int)")
	v, err = ks.Get(tagged{"a", 1})
	require.NoError(t, err)
	assert.Equal(t, 2, v)
}

// With interfaces in K, a hit still allocates nothing.
func TestInterfaceKeyHitAllocatesNothing(t *testing.T) {
	k, err := keyed.New(keyed.Config{MaxKeys: 4}, func(any) (int, error) { return 1, nil })
	require.NoError(t, err)
	keys := []any{"a", 2}
	for _, key := range keys {
		_, err := k.Get(key)
		require.NoError(t, err)
	}
	i := 0
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		i++
		if _, err := k.Get(keys[i%2]); err != nil {
			t.Fatal(err)
		}
	}))
}
