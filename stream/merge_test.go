package stream_test

import (
	"context"
	"sort"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/stream"
)

func ticker(n int, gap time.Duration) stream.Source[int] {
	return func(ctx context.Context, emit func(int) error) error {
		for v := range n {
			select {
			case <-time.After(gap):
			case <-ctx.Done():
				return ctx.Err()
			}
			if err := emit(v); err != nil {
				return err
			}
		}
		return nil
	}
}

func TestMergeForwardsEverySource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, err := stream.Subscribe(t.Context(), levee.Patterns{}, ticker(3, time.Second))
		require.NoError(t, err)
		b, err := stream.Subscribe(t.Context(), levee.Patterns{}, ticker(2, 1500*time.Millisecond))
		require.NoError(t, err)
		got, err := stream.Collect(t.Context(), stream.Merge(t.Context(), a, nil, b))
		require.NoError(t, err)
		sort.Ints(got)
		assert.Equal(t, []int{0, 0, 1, 1, 2}, got)
	})
}

// After a cancellation nothing is left running: synctest.Test fails on a goroutine of the
// bubble still blocked when the test function returns (rxgo's Merge leaves one per input).
func TestMergeLeakFreeAfterCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		var ins []<-chan stream.Item[int]
		for range 3 {
			items, err := stream.Subscribe(ctx, levee.Patterns{}, ticker(100, time.Millisecond))
			require.NoError(t, err)
			ins = append(ins, items)
		}
		out := stream.Merge(ctx, ins...)
		<-out
		cancel()
		for range out {
		}
		for _, in := range ins {
			for range in {
			}
		}
		synctest.Wait()
	})
}
