package async_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/fallback"
)

// A task cancelled while it waits leaves the queue at once, never runs and makes room.
func TestCancelledQueuedTaskLeavesTheQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pool := newPool(t, async.WorkerPoolConfig{CoreThreadPoolSize: 1, MaxThreadPoolSize: 1, QueueCapacity: 2})
		events := recordEvents(pool)
		first := newBlocker(1, nil)
		submit(t, pool, first.call)
		ran := make(chan int, 3)
		record := func(v int) levee.Call[int] {
			return func(context.Context) (int, error) { ran <- v; return v, nil }
		}
		cancelled := submit(t, pool, record(2))
		ctx, cancel := context.WithCancel(context.Background())
		byCtx, err := async.Submit(ctx, pool, nil, record(3))
		require.NoError(t, err)
		assert.Equal(t, poolState{1, 1, 2}, stateOf(pool))

		cancelled.Cancel()
		_, err = cancelled.Get(context.Background())
		assert.Same(t, context.Canceled, err)
		cancel()
		_, err = byCtx.Get(context.Background())
		assert.Same(t, context.Canceled, err)
		synctest.Wait()
		assert.Equal(t, poolState{1, 1, 0}, stateOf(pool))

		last := submit(t, pool, record(4))
		first.unblock()
		v, err := last.Get(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 4, v)
		close(ran)
		var order []int
		for v := range ran {
			order = append(order, v)
		}
		assert.Equal(t, []int{4}, order, "the cancelled tasks never ran")
		synctest.Wait()
		assert.Equal(t, []async.WorkerPoolEventType{
			async.EventCallPermitted, async.EventCallFinished, async.EventCallPermitted, async.EventCallFinished,
		}, events.get())
	})
}

// A running task's future is cancelled like any other: the call sees its context end.
func TestCancelRunningPoolTask(t *testing.T) {
	pool := newPool(t, async.WorkerPoolConfig{CoreThreadPoolSize: 1, MaxThreadPoolSize: 1})
	b := newBlocker(1, nil)
	f := submit(t, pool, b.call)
	b.awaitStart(t, 1)
	f.Cancel()
	_, err := f.Get(context.Background())
	assert.Same(t, context.Canceled, err)
	assert.Equal(t, int64(1), b.cancelled.Load())
}

// Shutdown refuses new tasks and lets the queued ones run; it waits for the workers, or for its
// context.
func TestShutdownRunsTheQueuedTasks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pool := newPool(t, async.WorkerPoolConfig{CoreThreadPoolSize: 1, MaxThreadPoolSize: 1, QueueCapacity: 1})
		b := newBlocker(1, nil)
		submit(t, pool, b.call)
		queued := submit(t, pool, value(2))

		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		assert.Equal(t, context.DeadlineExceeded, pool.Shutdown(ctx))
		_, err := async.Submit(context.Background(), pool, nil, value(3))
		assert.Same(t, async.ErrPoolClosed, err)
		assert.NotErrorIs(t, err, bulkhead.ErrBulkheadFull)

		b.unblock()
		require.NoError(t, pool.Shutdown(context.Background()))
		v, err := queued.Get(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 2, v)
		assert.Equal(t, poolState{0, 0, 0}, stateOf(pool))
		require.NoError(t, pool.Shutdown(nil)) //nolint:staticcheck // nil ctx is allowed
	})
}

// Close drops the queued tasks, cancels the running ones and waits for every worker.
func TestCloseDropsQueuedTasksAndCancelsRunningOnes(t *testing.T) {
	pool := newPool(t, async.WorkerPoolConfig{CoreThreadPoolSize: 2, MaxThreadPoolSize: 2, QueueCapacity: 5})
	b := newBlocker(1, nil)
	running := []*async.Future[int]{submit(t, pool, b.call), submit(t, pool, b.call)}
	var ran sync.WaitGroup
	queued := submit(t, pool, func(context.Context) (int, error) { ran.Add(1); return 2, nil })
	b.awaitStart(t, 2)

	require.NoError(t, pool.Close())
	assert.Equal(t, poolState{0, 0, 0}, stateOf(pool))
	for _, f := range running {
		_, err := f.Get(context.Background())
		assert.Same(t, context.Canceled, err)
	}
	_, err := queued.Get(context.Background())
	assert.Same(t, async.ErrPoolClosed, err)
	assert.Equal(t, int64(2), b.cancelled.Load())
	require.NoError(t, pool.Close(), "a second Close is harmless")
	_, err = async.Submit(context.Background(), pool, nil, value(1))
	assert.Same(t, async.ErrPoolClosed, err)
}

func TestCloseAnUnusedPool(t *testing.T) {
	pool, err := async.NewWorkerPool("idle", async.WorkerPoolConfig{})
	require.NoError(t, err)
	require.NoError(t, pool.Close())
	require.NoError(t, pool.Shutdown(context.Background()))
}

func TestSubmitRefusals(t *testing.T) {
	pool := newPool(t, async.WorkerPoolConfig{CoreThreadPoolSize: 1, MaxThreadPoolSize: 1})
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		pool *async.WorkerPool
		call levee.Call[int]
		want error
	}{
		{"nil pool", context.Background(), nil, value(1), async.ErrNilWorkerPool},
		{"nil call", context.Background(), pool, nil, levee.ErrNilCall},
		{"ended context", done, pool, value(1), context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := async.Submit(tc.ctx, tc.pool, nil, tc.call)
			assert.Nil(t, f)
			assert.Same(t, tc.want, err)
		})
	}
	assert.Equal(t, poolState{0, 0, 0}, stateOf(pool), "refusals touch no worker")
}

func TestSubmitNilContext(t *testing.T) {
	pool := newPool(t, async.WorkerPoolConfig{CoreThreadPoolSize: 1, MaxThreadPoolSize: 1})
	f, err := async.Submit(nil, pool, nil, value(8)) //nolint:staticcheck // nil ctx is allowed
	require.NoError(t, err)
	v, err := f.Get(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 8, v)
}

// The task's pipeline guards it on the worker: its fallback answers, marked.
func TestSubmitGuardsTheTaskWithItsPipeline(t *testing.T) {
	pool := newPool(t, async.WorkerPoolConfig{CoreThreadPoolSize: 1, MaxThreadPoolSize: 1})
	cb := bigBreaker(t)
	p := levee.Compose[string]().WithCircuitBreaker(cb).WithFallback(answering(t, "queued for later"))
	f, err := async.Submit(context.Background(), pool, p, failing[string](errBoom))
	require.NoError(t, err)
	v, err := f.Get(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "queued for later", v)
	assert.Equal(t, fallback.Outcome{Fallback: true, Cause: errBoom}, f.Outcome())
	assert.Equal(t, [3]int{0, 1, 0}, breakerCounts(cb))
}

// A panicking task completes its future with a *levee.PanicError and its worker goes on.
func TestPanickingTaskDoesNotKillItsWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pool := newPool(t, async.WorkerPoolConfig{CoreThreadPoolSize: 1, MaxThreadPoolSize: 1})
		_, err := submit(t, pool, func(context.Context) (int, error) { panic("task") }).Get(context.Background())
		var pe *levee.PanicError
		require.ErrorAs(t, err, &pe)
		v, err := submit(t, pool, value(2)).Get(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 2, v)
		synctest.Wait()
		assert.Equal(t, poolState{1, 0, 0}, stateOf(pool))
	})
}

// A task that ends its worker's goroutine with runtime.Goexit completes its future, and a new
// worker takes over the queue.
func TestGoexitInATaskIsAccountedFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pool := newPool(t, async.WorkerPoolConfig{CoreThreadPoolSize: 1, MaxThreadPoolSize: 1, QueueCapacity: 1})
		gate := make(chan struct{})
		f := submit(t, pool, func(context.Context) (int, error) {
			<-gate
			runtime.Goexit()
			return 0, nil
		})
		queued := submit(t, pool, value(2))
		close(gate)
		_, err := f.Get(context.Background())
		assert.ErrorContains(t, err, "exited without returning")
		v, err := queued.Get(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 2, v)
		synctest.Wait()
		assert.Equal(t, poolState{1, 0, 0}, stateOf(pool))
		require.NoError(t, pool.Close())
		assert.Equal(t, poolState{0, 0, 0}, stateOf(pool))
	})
}

// A worker that leaves by runtime.Goexit in an event consumer (a require in a subscriber, say)
// before its task ran must still complete the task's future: it stayed pending for ever.
func TestGoexitInAPoolSubscriberCompletesTheFuture(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pool := newPool(t, async.WorkerPoolConfig{CoreThreadPoolSize: 1, MaxThreadPoolSize: 1, QueueCapacity: 1})
		unsubscribe := pool.Subscribe(func(e async.WorkerPoolEvent) {
			if e.Type == async.EventCallPermitted {
				runtime.Goexit()
			}
		})
		var ran atomic.Bool
		f := submit(t, pool, func(context.Context) (int, error) { ran.Store(true); return 1, nil })
		synctest.Wait()
		r, done := f.Result()
		require.True(t, done, "the future never completes")
		assert.ErrorContains(t, r.Err, "exited without returning")
		assert.False(t, ran.Load())
		assert.Equal(t, poolState{0, 0, 0}, stateOf(pool))

		unsubscribe()
		v, err := submit(t, pool, value(2)).Get(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 2, v)
	})
}

// A task that leaves by runtime.Goexit has started and ended: CALL_FINISHED follows its
// CALL_PERMITTED, as for any other outcome (Resilience4j publishes it in a finally block).
func TestGoexitInATaskIsReportedFinished(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pool := newPool(t, async.WorkerPoolConfig{CoreThreadPoolSize: 1, MaxThreadPoolSize: 1, QueueCapacity: 1})
		events := recordEvents(pool)
		f := submit(t, pool, func(context.Context) (int, error) { runtime.Goexit(); return 0, nil })
		_, err := f.Get(context.Background())
		assert.ErrorContains(t, err, "exited without returning")
		synctest.Wait()
		assert.Equal(t, []async.WorkerPoolEventType{async.EventCallPermitted, async.EventCallFinished}, events.get())
	})
}
