package operators_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/operators"
	"github.com/levee-go/levee/stream"
)

// A nil or zero PositionWatermark, or one made with a nil function, does nothing, and the
// operator given its Watermark is refused.
func TestPositionWatermarkWithoutPositionsDoesNothing(t *testing.T) {
	var nilPW *operators.PositionWatermark[int, struct{}, int]
	var zero operators.PositionWatermark[int, struct{}, int]
	cases := []struct {
		name string
		pw   *operators.PositionWatermark[int, struct{}, int]
		err  error  // Err
		msg  string // the operator's error
	}{
		{"nil", nilPW, nil, "got a nil or zero PositionWatermark"},
		{"zero", &zero, nil, "got a nil or zero PositionWatermark"},
		{"nil position function", operators.NewPositionWatermark[int, int](nil), levee.ErrNilCall, "got one made with a nil function"},
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

			op, err := operators.MapResults(nil, func(_ context.Context, v int) (int, error) { return v, nil },
				operators.CommitWatermark(w))
			assert.Nil(t, op)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "CommitWatermark needs the Watermark of a PositionWatermark")
			assert.Contains(t, err.Error(), c.msg)
		})
	}
	t.Run("partitions", func(t *testing.T) {
		pw := operators.NewPartitionWatermark[int, string, int](nil)
		pw.Ack(0, 1)
		assert.Equal(t, map[string]int{}, pw.Load())
		assert.Same(t, levee.ErrNilCall, pw.Err())
	})
}

// A panic in the position function is recovered in Ack: that Result counts as not
// acknowledged, so the watermark stays below its element for good, and Err reports it.
func TestPositionWatermarkPanicInThePositionFunction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pw := operators.NewPositionWatermark(func(v int) int {
			if v == 2 {
				panic("pos")
			}
			return 10 * v
		})
		m := mustOp(t)(operators.MapResults(nil, func(_ context.Context, v int) (int, error) { return v, nil },
			operators.CommitWatermark(pw.Watermark())))
		var acked []int
		for it := range m(rxgo.Just(1, 2, 3)()).Observe(rxgo.WithContext(t.Context())) {
			r := it.V.(operators.Result[int, int])
			assert.NotPanics(t, func() { pw.Ack(r.Index, r.In) })
			acked = append(acked, r.Index)
		}
		synctest.Wait()
		assert.Equal(t, []int{0, 1, 2}, acked)
		assert.Equal(t, 1, pw.Watermark().Load())
		assert.Equal(t, map[struct{}]int{{}: 10}, pw.Load())
		var pe *levee.PanicError
		require.ErrorAs(t, pw.Err(), &pe)
		assert.Equal(t, "pos", pe.Value)
		pw.Ack(1, 2)
		assert.Same(t, pe, pw.Err())
	})
}

// ForEach with a nil fn returns levee.ErrNilCall and does not subscribe.
func TestForEachNilFunction(t *testing.T) {
	p := newProbe(1, 2)
	assert.Same(t, levee.ErrNilCall, operators.ForEach[int](t.Context(), p.Observable(), nil))
	assert.Equal(t, int32(0), p.subs.Load())
	assert.Same(t, levee.ErrNilCall, operators.ForEach[int](t.Context(), rxgo.Just(1, 2)(), nil))
}

// stream.Subscribe given ToSource(nil) starts, and its stream fails with levee.ErrNilCall.
func TestToSourceNilThroughSubscribe(t *testing.T) {
	items, err := stream.Subscribe(t.Context(), levee.Patterns{}, operators.ToSource[int](nil))
	require.NoError(t, err)
	vs, err := stream.Collect(t.Context(), items)
	assert.Empty(t, vs)
	assert.ErrorIs(t, err, levee.ErrNilCall)
}

// The sources of a nil function fail each subscription with levee.ErrNilCall.
func TestNilSourcesFailEachSubscription(t *testing.T) {
	for name, obs := range map[string]rxgo.Observable{
		"FromSource": operators.FromSource[int](nil),
		"FromChan":   operators.FromChan[int](nil),
		"Lazy":       operators.Lazy(nil),
	} {
		t.Run(name, func(t *testing.T) {
			for range 2 {
				vs, err := operators.Collect[int](t.Context(), obs)
				assert.Empty(t, vs)
				assert.Same(t, levee.ErrNilCall, err)
			}
		})
	}
}

func TestNilItemTypeError(t *testing.T) {
	var e *operators.ItemTypeError
	assert.Equal(t, "operators: item of another type", e.Error())
}
