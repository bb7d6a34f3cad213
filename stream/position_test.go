package stream_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/stream"
)

type record struct {
	partition int
	offset    int64
}

// The position watermark follows the count watermark: per partition, the offset of its last
// record below the first record not done. Record 2 (partition 0, offset 11) is slow: nothing
// of partition 0 past offset 10 counts, nor of partition 1 past the records before it, however
// far the other results have gone.
func TestPartitionWatermark(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		recs := []record{{0, 10}, {1, 50}, {0, 11}, {1, 51}, {1, 52}, {0, 12}}
		pw := stream.NewPartitionWatermark(func(r record) (int, int64) { return r.partition, r.offset })
		out, err := stream.Map(t.Context(), feed(t.Context(), recs...), nil, func(_ context.Context, r record) (int64, error) {
			if r.offset == 11 {
				time.Sleep(time.Second)
			}
			return r.offset, nil
		}, stream.Concurrency(6), stream.Unordered(), stream.CommitWatermark(pw.Watermark()))
		require.NoError(t, err)
		assert.Empty(t, pw.Load())
		var loads []map[int]int64
		for r := range out {
			pw.Ack(r.Index, r.In)
			loads = append(loads, pw.Load())
		}
		synctest.Wait()
		// 0, 1, 3, 4, 5 come first; 0 and 1 are below the slow record 2, the rest above it.
		assert.Equal(t, map[int]int64{0: 10, 1: 50}, loads[len(loads)-2])
		assert.Equal(t, map[int]int64{0: 12, 1: 52}, pw.Load())
	})
}

func TestPositionWatermarkWithoutPartitions(t *testing.T) {
	pw := stream.NewPositionWatermark(func(id string) string { return id })
	_, ok := pw.Position()
	assert.False(t, ok)
	ids := []string{"1-0", "1-1", "2-0"}
	out, err := stream.Map(t.Context(), feed(t.Context(), ids...), nil,
		func(_ context.Context, id string) (string, error) { return id, nil }, stream.CommitWatermark(pw.Watermark()))
	require.NoError(t, err)
	for r := range out {
		pw.Ack(r.Index, r.In)
	}
	require.Eventually(t, func() bool { p, _ := pw.Position(); return p == "2-0" }, time.Second, time.Millisecond)
}

// A Kafka consumer commits, per partition, the offset after the last record handled.
func ExampleNewPartitionWatermark() {
	type rec struct {
		partition int32
		offset    int64
	}
	pw := stream.NewPartitionWatermark(func(r rec) (int32, int64) { return r.partition, r.offset })
	in := make(chan rec, 4)
	for _, r := range []rec{{0, 7}, {1, 3}, {0, 8}, {1, 4}} {
		in <- r
	}
	close(in)
	out, _ := stream.Map(context.Background(), in, nil,
		func(_ context.Context, r rec) (int64, error) { return r.offset, nil }, stream.CommitWatermark(pw.Watermark()))
	for r := range out {
		pw.Ack(r.Index, r.In)
	}
	for len(pw.Load()) < 2 || pw.Load()[1] < 4 { // the operator records a send just after it
		time.Sleep(time.Millisecond)
	}
	done := pw.Load()
	for _, p := range []int32{0, 1} {
		fmt.Printf("partition %d: commit %d\n", p, done[p]+1)
	}
	// Output:
	// partition 0: commit 9
	// partition 1: commit 5
}
