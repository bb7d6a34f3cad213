package stream_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/stream"
)

// A nil or zero PositionWatermark, or one made with a nil function, does nothing, and the
// operator given its Watermark refuses it and starts nothing.
func TestPositionWatermarkWithoutPositionsDoesNothing(t *testing.T) {
	var nilPW *stream.PositionWatermark[int, struct{}, int]
	var zero stream.PositionWatermark[int, struct{}, int]
	cases := []struct {
		name string
		pw   *stream.PositionWatermark[int, struct{}, int]
		err  error  // Err
		msg  string // the operator's error
	}{
		{"nil", nilPW, nil, "got a nil or zero PositionWatermark"},
		{"zero", &zero, nil, "got a nil or zero PositionWatermark"},
		{"nil position function", stream.NewPositionWatermark[int, int](nil), levee.ErrNilCall, "got one made with a nil function"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.pw.Ack(0, 1)
			assert.Equal(t, map[struct{}]int{}, c.pw.Load())
			p, ok := c.pw.Position()
			assert.Equal(t, 0, p)
			assert.False(t, ok)
			assert.Equal(t, c.err, c.pw.Err())
			w := c.pw.Watermark()
			require.NotNil(t, w)
			assert.Equal(t, 0, w.Load())

			out, err := stream.Map(t.Context(), feed(t.Context(), 1, 2), nil,
				func(_ context.Context, v int) (int, error) { return v, nil }, stream.CommitWatermark(w))
			assert.Nil(t, out)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "CommitWatermark needs the Watermark of a PositionWatermark")
			assert.Contains(t, err.Error(), c.msg)
		})
	}
	t.Run("partitions", func(t *testing.T) {
		pw := stream.NewPartitionWatermark[int, string, int](nil)
		pw.Ack(0, 1)
		assert.Equal(t, map[string]int{}, pw.Load())
		assert.Same(t, levee.ErrNilCall, pw.Err())
	})
}

// A panic in the position function is recovered in Ack: that Result counts as not
// acknowledged, so the watermark stays below its element for good, and Err reports it.
func TestPositionWatermarkPanicInThePositionFunction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pw := stream.NewPositionWatermark(func(v int) int {
			if v == 2 {
				panic("pos")
			}
			return 10 * v
		})
		assert.NoError(t, pw.Err())
		out, err := stream.Map(t.Context(), feed(t.Context(), 1, 2, 3), nil,
			func(_ context.Context, v int) (int, error) { return v, nil }, stream.CommitWatermark(pw.Watermark()))
		require.NoError(t, err)
		var acked []int
		for r := range out {
			assert.NotPanics(t, func() { pw.Ack(r.Index, r.In) })
			acked = append(acked, r.Index)
		}
		synctest.Wait()
		assert.Equal(t, []int{0, 1, 2}, acked)
		assert.Equal(t, 1, pw.Watermark().Load())
		assert.Equal(t, map[struct{}]int{{}: 10}, pw.Load())
		p, ok := pw.Position()
		assert.Equal(t, 10, p)
		assert.True(t, ok)
		var pe *levee.PanicError
		require.ErrorAs(t, pw.Err(), &pe)
		assert.Equal(t, "pos", pe.Value)

		pw.Ack(1, 2) // panics again: the first panic stays the one reported
		assert.Same(t, pe, pw.Err())
		assert.Equal(t, 1, pw.Watermark().Load())
	})
}

// The position function is called once per Ack.
func TestPositionWatermarkCallsThePositionFunctionOncePerAck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		pw := stream.NewPartitionWatermark(func(v int) (int, int) { calls++; return v % 2, v })
		out, err := stream.Map(t.Context(), feed(t.Context(), 0, 1, 2), nil,
			func(_ context.Context, v int) (int, error) { return v, nil }, stream.CommitWatermark(pw.Watermark()))
		require.NoError(t, err)
		for r := range out {
			pw.Ack(r.Index, r.In)
		}
		synctest.Wait()
		assert.Equal(t, 3, calls)
		assert.Equal(t, map[int]int{0: 2, 1: 1}, pw.Load())
		assert.NoError(t, pw.Err())
	})
}

// A nil ctx is context.Background(), as for Map and Collect.
func TestMergeNilContextMeansBackground(t *testing.T) {
	var nilCtx context.Context
	assert.Empty(t, drain(stream.Merge[int](nilCtx)))
	assert.Equal(t, []int{1, 2, 3}, drain(stream.Merge(nilCtx, nil, feed(t.Context(), 1, 2, 3))))
}

func TestNilStoppedError(t *testing.T) {
	var e *stream.StoppedError[int]
	assert.Equal(t, "stream: stopped at the first failure", e.Error())
	assert.NoError(t, e.Unwrap())
	assert.True(t, e.Is(stream.ErrStopped))
}
