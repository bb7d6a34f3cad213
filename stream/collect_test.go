package stream_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/stream"
)

func TestCollect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := func(_ context.Context, emit func(int) error) error {
			for v := range 3 {
				if err := emit(v); err != nil {
					return err
				}
			}
			return nil
		}
		items, err := stream.Subscribe(t.Context(), levee.Patterns{}, stream.Source[int](src))
		require.NoError(t, err)
		got, err := stream.Collect(t.Context(), items)
		require.NoError(t, err)
		assert.Equal(t, []int{0, 1, 2}, got)

		boom := errors.New("boom")
		items, err = stream.Subscribe(t.Context(), levee.Patterns{}, stream.Source[int](func(_ context.Context, emit func(int) error) error {
			_ = emit(7)
			return boom
		}))
		require.NoError(t, err)
		got, err = stream.Collect(t.Context(), items)
		assert.Equal(t, []int{7}, got)
		assert.ErrorIs(t, err, boom)

		// A cancellation is not a completion.
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		items, err = stream.Subscribe(ctx, levee.Patterns{}, stream.Source[int](func(ctx context.Context, emit func(int) error) error {
			_ = emit(1)
			<-ctx.Done()
			return ctx.Err()
		}))
		require.NoError(t, err)
		got, err = stream.Collect(ctx, items)
		assert.Equal(t, []int{1}, got)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	})
}

func ExampleCollect() {
	items, _ := stream.Subscribe(context.Background(), levee.Patterns{}, stream.Source[string](func(_ context.Context, emit func(string) error) error {
		for _, s := range []string{"tick-1", "tick-2"} {
			if err := emit(s); err != nil {
				return err
			}
		}
		return nil
	}))
	got, err := stream.Collect(context.Background(), items)
	fmt.Println(got, err)
	// Output:
	// [tick-1 tick-2] <nil>
}
