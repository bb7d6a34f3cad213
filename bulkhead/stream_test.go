package bulkhead_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/bulkhead"
)

func TestEventsChannelDropsWhenFullAndEndsWithContext(t *testing.T) {
	b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1})
	ctx, cancel := context.WithCancel(context.Background())
	ch, dropped := b.Events(ctx, 2)
	require.True(t, b.TryAcquire())  // PERMITTED
	require.False(t, b.TryAcquire()) // REJECTED
	b.Release()                      // FINISHED: dropped, the buffer is full
	assert.Equal(t, uint64(1), dropped())
	cancel()
	var got []bulkhead.EventType
	for e := range ch {
		got = append(got, e.Type)
	}
	assert.Equal(t, []bulkhead.EventType{bulkhead.EventCallPermitted, bulkhead.EventCallRejected}, got)
}

func TestEventSeqEndsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1})
		ctx, cancel := context.WithCancel(context.Background())
		seq, dropped := b.EventSeq(ctx, 4)
		var got []bulkhead.EventType
		done := make(chan struct{})
		go func() {
			defer close(done)
			for e := range seq {
				got = append(got, e.Type)
			}
		}()
		synctest.Wait()
		require.True(t, b.TryAcquire())
		b.Release()
		synctest.Wait()
		cancel()
		<-done
		assert.Equal(t, []bulkhead.EventType{bulkhead.EventCallPermitted, bulkhead.EventCallFinished}, got)
		assert.Equal(t, uint64(0), dropped())

		var nilBulkhead *bulkhead.Bulkhead
		ch, n := nilBulkhead.Events(ctx, 1)
		_, open := <-ch
		assert.False(t, open)
		assert.Equal(t, uint64(0), n())
		s, _ := nilBulkhead.EventSeq(ctx, 1)
		for range s {
			t.Fatal("a nil Bulkhead yields nothing")
		}
	})
}
