package stream_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/stream"
)

// A position function whose partition, of an interface type, holds a value Go cannot hash
// (a []byte topic name) must not make Load panic, now and at every later Load: the element
// counts as not acknowledged, as for a panic of the function, and Err says why.
func TestPositionWatermarkUnhashablePartition(t *testing.T) {
	w := stream.NewPartitionWatermark(func(v int) (any, int) {
		if v == 1 {
			return []byte("topic"), v
		}
		return "topic", v
	})
	out, err := stream.Map(t.Context(), feed(t.Context(), 0, 1, 2), nil,
		func(_ context.Context, v int) (int, error) { return v, nil }, stream.CommitWatermark(w.Watermark()))
	require.NoError(t, err)
	for r := range out {
		w.Ack(r.Index, r.In)
	}
	var got map[any]int
	require.NotPanics(t, func() { got = w.Load() })
	assert.Equal(t, map[any]int{"topic": 0}, got, "the watermark stays below the refused element")
	require.NotPanics(t, func() { got = w.Load() })
	var pe *levee.PanicError
	assert.ErrorAs(t, w.Err(), &pe)
}

// A NaN partition equals no partition, not even itself: Load could never report it, and each
// one would add an entry for good. The element counts as not acknowledged, so the watermark
// stays below it, and Err matches ErrPartitionNotEqual; Load's map does not grow.
func TestPositionWatermarkNaNPartition(t *testing.T) {
	w := stream.NewPartitionWatermark(func(v int) (float64, int) {
		if v >= 2 {
			return math.NaN(), v
		}
		return 1, v
	})
	out, err := stream.Map(t.Context(), feed(t.Context(), 0, 1, 2, 3, 4), nil,
		func(_ context.Context, v int) (int, error) { return v, nil }, stream.CommitWatermark(w.Watermark()))
	require.NoError(t, err)
	for r := range out {
		w.Ack(r.Index, r.In)
	}
	assert.Equal(t, map[float64]int{1: 1}, w.Load(), "the watermark stays below the first NaN")
	assert.Equal(t, map[float64]int{1: 1}, w.Load())
	require.ErrorIs(t, w.Err(), stream.ErrPartitionNotEqual)
	assert.EqualError(t, w.Err(), "levee: position partition not equal to itself (a NaN): its positions could never be found again; got NaN")
}
