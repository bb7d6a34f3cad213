package stream_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/stream"
)

// Under OrderByKey, element 0's key waits 10s while the other keys' results go out above the
// watermark: without a bound the operator reads on past its Window (64), which frees a slot at
// each send, to the input's end, every element redelivered after a crash; with MaxUncommitted(8) no element is taken while 8 are taken and
// not yet below the watermark.
func TestMaxUncommittedBoundsRedelivery(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []stream.Option
		ahead int // the most elements taken and not below the watermark, seen at a call's start
	}{
		{"without", nil, 100},
		{"with", []stream.Option{stream.MaxUncommitted(8)}, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := stream.NewWatermark()
				var mu sync.Mutex
				ahead := 0
				opts := append([]stream.Option{stream.Concurrency(4), stream.Window(64),
					stream.OrderByKey(func(v int) int { return v % 4 }), stream.CommitWatermark(w)}, tc.opts...)
				out, err := stream.Map(t.Context(), feed(t.Context(), count(100)...), nil, func(ctx context.Context, v int) (int, error) {
					mu.Lock()
					ahead = max(ahead, v+1-w.Load())
					mu.Unlock()
					if v == 0 {
						time.Sleep(10 * time.Second)
					} else {
						time.Sleep(time.Millisecond)
					}
					return v, nil
				}, opts...)
				require.NoError(t, err)
				n := 0
				for r := range out {
					require.NoError(t, r.Err)
					w.Ack(r.Index)
					n++
				}
				synctest.Wait()
				assert.Equal(t, 100, n)
				assert.Equal(t, 100, w.Load())
				assert.Equal(t, tc.ahead, ahead)
			})
		})
	}
}

func TestMaxUncommittedInvalid(t *testing.T) {
	_, err := stream.Map(context.Background(), make(chan int), nil,
		func(context.Context, int) (int, error) { return 0, nil }, stream.MaxUncommitted(8))
	require.EqualError(t, err, "stream: MaxUncommitted needs CommitWatermark")
	_, err = stream.Map(context.Background(), make(chan int), nil,
		func(context.Context, int) (int, error) { return 0, nil }, stream.MaxUncommitted(0), stream.CommitWatermark(stream.NewWatermark()))
	require.EqualError(t, err, "stream: MaxUncommitted must be in [1, 65536], got 0")
}
