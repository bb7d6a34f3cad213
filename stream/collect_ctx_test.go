package stream_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/stream"
)

// Collect promises that when ctx ends first it returns: that holds after an error item as
// well, while it waits for the channel to close.
func TestCollectHonoursCtxAfterTheErrorItem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		items := make(chan stream.Item[int])
		boom := errors.New("boom")
		ctx, cancel := context.WithCancel(context.Background())
		release := make(chan struct{})
		go func() {
			items <- stream.Item[int]{Value: 1}
			items <- stream.Item[int]{Err: boom}
			<-release // the producer is slow to close: Collect must not wait for it past ctx
			close(items)
		}()
		defer close(release)
		returned := make(chan struct{})
		var got []int
		var err error
		go func() {
			got, err = stream.Collect(ctx, items)
			close(returned)
		}()
		synctest.Wait()
		cancel()
		synctest.Wait()
		select {
		case <-returned:
		default:
			t.Fatal("Collect still blocked after ctx ended")
		}
		assert.Equal(t, []int{1}, got)
		assert.ErrorIs(t, err, boom)
	})
}
