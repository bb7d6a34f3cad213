package operators_test

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/operators"
)

// As stream's: per partition, the offset of its last element below the first not done; the
// slow element (partition 0, offset 11) holds both partitions at what came before it.
func TestPartitionWatermark(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type record struct {
			partition int
			offset    int64
		}
		recs := []any{record{0, 10}, record{1, 50}, record{0, 11}, record{1, 51}, record{1, 52}, record{0, 12}}
		pw := operators.NewPartitionWatermark(func(r record) (int, int64) { return r.partition, r.offset })
		m := mustOp(t)(operators.MapResults(nil, func(_ context.Context, r record) (int64, error) {
			if r.offset == 11 {
				time.Sleep(time.Second)
			}
			return r.offset, nil
		}, operators.Concurrency(6), operators.Unordered(), operators.CommitWatermark(pw.Watermark())))
		var loads []map[int]int64
		for it := range m(rxgo.Just(recs...)()).Observe(rxgo.WithContext(t.Context())) {
			r := it.V.(operators.Result[record, int64])
			pw.Ack(r.Index, r.In)
			loads = append(loads, pw.Load())
		}
		synctest.Wait()
		assert.Equal(t, map[int]int64{0: 10, 1: 50}, loads[len(loads)-2])
		assert.Equal(t, map[int]int64{0: 12, 1: 52}, pw.Load())
	})
}

// As stream's: a NaN partition is refused, its element counts as not acknowledged, and Err
// matches ErrPartitionNotEqual.
func TestPartitionWatermarkNaNPartition(t *testing.T) {
	pw := operators.NewPartitionWatermark(func(v int) (float64, int) {
		if v >= 2 {
			return math.NaN(), v
		}
		return 1, v
	})
	m := mustOp(t)(operators.MapResults(nil, func(_ context.Context, v int) (int, error) { return v, nil },
		operators.CommitWatermark(pw.Watermark())))
	for it := range m(rxgo.Just(0, 1, 2, 3)()).Observe(rxgo.WithContext(t.Context())) {
		r := it.V.(operators.Result[int, int])
		pw.Ack(r.Index, r.In)
	}
	assert.Equal(t, map[float64]int{1: 1}, pw.Load())
	assert.ErrorIs(t, pw.Err(), operators.ErrPartitionNotEqual)
}
