package async_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/async"
)

func TestWorkerPoolEventsChannelAndSeq(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pool, err := async.NewWorkerPool("reports", async.WorkerPoolConfig{CoreThreadPoolSize: 1, MaxThreadPoolSize: 1})
		require.NoError(t, err)
		defer pool.Close()
		ctx, cancel := context.WithCancel(context.Background())
		ch, dropped := pool.Events(ctx, 1)
		seq, seqDropped := pool.EventSeq(ctx, 4)
		var fromSeq []async.WorkerPoolEventType
		done := make(chan struct{})
		go func() {
			defer close(done)
			for e := range seq {
				fromSeq = append(fromSeq, e.Type)
			}
		}()
		synctest.Wait()
		_, _ = submit(t, pool, value(1)).Get(context.Background()) // CALL_PERMITTED, CALL_FINISHED
		synctest.Wait()
		cancel()
		<-done
		var fromChan []async.WorkerPoolEventType
		for e := range ch {
			fromChan = append(fromChan, e.Type)
		}
		assert.Equal(t, []async.WorkerPoolEventType{async.EventCallPermitted}, fromChan)
		assert.Equal(t, uint64(1), dropped(), "CALL_FINISHED found the buffer of 1 full")
		assert.Equal(t, []async.WorkerPoolEventType{async.EventCallPermitted, async.EventCallFinished}, fromSeq)
		assert.Equal(t, uint64(0), seqDropped())
	})
}
