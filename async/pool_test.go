package async_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
)

func newPool(t testing.TB, cfg async.WorkerPoolConfig) *async.WorkerPool {
	t.Helper()
	p, err := async.NewWorkerPool("pool", cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// poolState is the part of the metrics that changes: workers alive, workers busy, queue depth.
type poolState struct{ workers, active, queued int }

func stateOf(p *async.WorkerPool) poolState {
	m := p.Metrics()
	return poolState{m.ThreadPoolSize, m.ActiveThreadCount, m.QueueDepth}
}

func submit[T any](t testing.TB, pool *async.WorkerPool, call levee.Call[T]) *async.Future[T] {
	t.Helper()
	f, err := async.Submit(context.Background(), pool, nil, call)
	require.NoError(t, err)
	return f
}

// poolEvents records a pool's events in order.
type poolEvents struct {
	mu    sync.Mutex
	types []async.WorkerPoolEventType
}

func recordEvents(p *async.WorkerPool) *poolEvents {
	e := &poolEvents{}
	p.Subscribe(func(ev async.WorkerPoolEvent) {
		e.mu.Lock()
		e.types = append(e.types, ev.Type)
		e.mu.Unlock()
	})
	return e
}

func (e *poolEvents) get() []async.WorkerPoolEventType {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]async.WorkerPoolEventType(nil), e.types...)
}

// Resilience4j: admission follows ThreadPoolExecutor — a new worker below the core size,
// then the queue, then new workers up to the maximum, then a synchronous BulkheadFull.
func TestThreadPoolBulkheadAdmissionFollowsThreadPoolExecutor(t *testing.T) {
	pool := newPool(t, async.WorkerPoolConfig{CoreThreadPoolSize: 2, MaxThreadPoolSize: 4, QueueCapacity: 2})
	events := recordEvents(pool)
	var blockers []*blocker[int]
	var futures []*async.Future[int]
	for i, want := range []poolState{
		{1, 1, 0}, // a core worker
		{2, 2, 0}, // another core worker
		{2, 2, 1}, // queued
		{2, 2, 2}, // queued: the queue is full
		{3, 3, 2}, // a worker above the core size
		{4, 4, 2}, // the last one
	} {
		b := newBlocker(i, nil)
		blockers = append(blockers, b)
		futures = append(futures, submit(t, pool, b.call))
		assert.Equal(t, want, stateOf(pool), "after task %d", i)
	}

	_, err := async.Submit(context.Background(), pool, nil, value(99))
	var full *async.WorkerPoolFullError
	require.ErrorAs(t, err, &full)
	assert.Equal(t, "pool", full.Name)
	assert.ErrorIs(t, err, bulkhead.ErrBulkheadFull)
	assert.True(t, levee.IsRejection(err))
	assert.EqualError(t, err, "async: WorkerPool 'pool' is full and does not permit further calls")
	assert.Equal(t, async.WorkerPoolMetrics{
		CoreThreadPoolSize: 2, MaximumThreadPoolSize: 4, ThreadPoolSize: 4, ActiveThreadCount: 4,
		AvailableThreadCount: 0, QueueDepth: 2, QueueCapacity: 2, RemainingQueueCapacity: 0,
	}, pool.Metrics())

	for _, i := range []int{0, 1, 4, 5} {
		blockers[i].awaitStart(t, 1)
	}
	assert.Zero(t, blockers[2].startedN.Load(), "queued tasks wait")
	blockers[0].unblock()
	blockers[2].awaitStart(t, 1) // the first queued task takes the freed worker
	v, err := futures[0].Get(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 0, v)
	for _, b := range blockers {
		b.unblock()
	}
	for i, f := range futures {
		v, err := f.Get(context.Background())
		require.NoError(t, err)
		assert.Equal(t, i, v)
	}
	// A worker publishes CALL_FINISHED after the task's future completes (as Resilience4j's
	// finally block), so wait for the workers to exit before counting the events.
	require.NoError(t, pool.Shutdown(context.Background()))
	got := events.get()
	count := map[async.WorkerPoolEventType]int{}
	for _, e := range got {
		count[e]++
	}
	assert.Equal(t, map[async.WorkerPoolEventType]int{
		async.EventCallPermitted: 6, async.EventCallRejected: 1, async.EventCallFinished: 6,
	}, count)
	rejectedAt := slices.Index(got, async.EventCallRejected)
	finishedAt := slices.Index(got, async.EventCallFinished)
	assert.Less(t, rejectedAt, finishedAt, "the refusal is published synchronously, before any task ends")
}

// Like ThreadPoolExecutor, the pool grows to its core size even while a worker is idle.
func TestANewCoreWorkerStartsEvenWhenOneIsIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pool := newPool(t, async.WorkerPoolConfig{CoreThreadPoolSize: 2, MaxThreadPoolSize: 2})
		_, err := submit(t, pool, value(1)).Get(context.Background())
		require.NoError(t, err)
		synctest.Wait()
		assert.Equal(t, poolState{1, 0, 0}, stateOf(pool))
		b := newBlocker(2, nil)
		submit(t, pool, b.call)
		assert.Equal(t, poolState{2, 1, 0}, stateOf(pool))
		b.unblock()
		synctest.Wait()
		assert.Equal(t, poolState{2, 0, 0}, stateOf(pool), "core workers stay")
	})
}

// Workers above the core size exit after KeepAliveDuration idle; core workers stay.
func TestWorkersAboveTheCoreSizeExitAfterKeepAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pool := newPool(t, async.WorkerPoolConfig{
			CoreThreadPoolSize: 1, MaxThreadPoolSize: 3, QueueCapacity: 1, KeepAliveDuration: 20 * time.Millisecond,
		})
		b := newBlocker(0, nil)
		for range 4 {
			submit(t, pool, b.call)
		}
		assert.Equal(t, poolState{3, 3, 1}, stateOf(pool))
		b.unblock()
		synctest.Wait()
		assert.Equal(t, poolState{3, 0, 0}, stateOf(pool))
		time.Sleep(20*time.Millisecond - time.Nanosecond)
		synctest.Wait()
		assert.Equal(t, 3, stateOf(pool).workers, "still within the keep-alive")
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		assert.Equal(t, poolState{1, 0, 0}, stateOf(pool))
		time.Sleep(time.Hour)
		synctest.Wait()
		assert.Equal(t, 1, stateOf(pool).workers, "the core worker stays")
	})
}

// A worker above the core size that gets work within its keep-alive stays.
func TestKeepAliveRestartsWhenAWorkerGetsWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pool := newPool(t, async.WorkerPoolConfig{
			CoreThreadPoolSize: 1, MaxThreadPoolSize: 2, QueueCapacity: NoQueue(), KeepAliveDuration: 20 * time.Millisecond,
		})
		b := newBlocker(0, nil)
		submit(t, pool, b.call)
		submit(t, pool, b.call)
		b.unblock()
		synctest.Wait()
		for range 5 {
			time.Sleep(15 * time.Millisecond)
			submit(t, pool, value(1))
			submit(t, pool, value(1))
			synctest.Wait()
		}
		assert.Equal(t, 2, stateOf(pool).workers)
		time.Sleep(20 * time.Millisecond)
		synctest.Wait()
		assert.Equal(t, 1, stateOf(pool).workers)
	})
}

func NoQueue() int { return async.NoQueue }

func TestNoKeepAliveEndsSurplusWorkersAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pool := newPool(t, async.WorkerPoolConfig{
			CoreThreadPoolSize: 1, MaxThreadPoolSize: 3, QueueCapacity: async.NoQueue, KeepAliveDuration: async.NoKeepAlive,
		})
		b := newBlocker(0, nil)
		for range 3 {
			submit(t, pool, b.call)
		}
		assert.Equal(t, poolState{3, 3, 0}, stateOf(pool))
		b.unblock()
		synctest.Wait()
		assert.Equal(t, poolState{1, 0, 0}, stateOf(pool))
	})
}

// NoQueue is Resilience4j's queueCapacity 0, a hand-off: a task goes to an idle worker or a new
// one, or is refused.
func TestNoQueueHandsTasksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pool := newPool(t, async.WorkerPoolConfig{CoreThreadPoolSize: 1, MaxThreadPoolSize: 2, QueueCapacity: async.NoQueue})
		assert.Equal(t, 0, pool.Metrics().QueueCapacity)
		b1, b2 := newBlocker(1, nil), newBlocker(2, nil)
		f1 := submit(t, pool, b1.call)
		submit(t, pool, b2.call)
		_, err := async.Submit(context.Background(), pool, nil, value(3))
		assert.ErrorIs(t, err, bulkhead.ErrBulkheadFull)
		b1.unblock()
		_, _ = f1.Get(context.Background())
		synctest.Wait()
		assert.Equal(t, poolState{2, 1, 0}, stateOf(pool))
		v, err := submit(t, pool, value(4)).Get(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 4, v, "handed to the idle worker")
		assert.Equal(t, 2, stateOf(pool).workers)
		b2.unblock()
	})
}

// CALL_PERMITTED is published when a task starts running, not when it is accepted; a queued
// task gets it when it leaves the queue.
func TestPoolEventsFollowResilience4jTiming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pool := newPool(t, async.WorkerPoolConfig{CoreThreadPoolSize: 1, MaxThreadPoolSize: 1, QueueCapacity: 1})
		events := recordEvents(pool)
		b1, b2 := newBlocker(1, nil), newBlocker(2, nil)
		submit(t, pool, b1.call)
		b1.awaitStart(t, 1)
		submit(t, pool, b2.call)
		_, err := async.Submit(context.Background(), pool, nil, value(3))
		require.Error(t, err)
		synctest.Wait()
		assert.Equal(t, []async.WorkerPoolEventType{async.EventCallPermitted, async.EventCallRejected}, events.get())
		b1.unblock()
		synctest.Wait()
		assert.Equal(t, []async.WorkerPoolEventType{
			async.EventCallPermitted, async.EventCallRejected, async.EventCallFinished, async.EventCallPermitted,
		}, events.get())
		b2.unblock()
		synctest.Wait()
		assert.Equal(t, async.EventCallFinished, events.get()[4])
		assert.Equal(t, "CALL_PERMITTED", async.EventCallPermitted.String())
		assert.Equal(t, "CALL_REJECTED", async.EventCallRejected.String())
		assert.Equal(t, "CALL_FINISHED", async.EventCallFinished.String())
		assert.Equal(t, "EventType(9)", async.WorkerPoolEventType(9).String(), "the pool publishes the bulkhead's event type")
	})
}

func TestPoolEventCarriesNameAndTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pool, err := async.NewWorkerPool("reports", async.WorkerPoolConfig{CoreThreadPoolSize: 1, MaxThreadPoolSize: 1})
		require.NoError(t, err)
		defer pool.Close()
		var got []async.WorkerPoolEvent
		var mu sync.Mutex
		unsubscribe := pool.Subscribe(func(e async.WorkerPoolEvent) { mu.Lock(); got = append(got, e); mu.Unlock() })
		now := time.Now()
		_, _ = submit(t, pool, value(1)).Get(context.Background())
		synctest.Wait()
		unsubscribe()
		_, _ = submit(t, pool, value(1)).Get(context.Background())
		synctest.Wait()
		assert.Equal(t, []async.WorkerPoolEvent{
			{Name: "reports", Type: async.EventCallPermitted, Time: now},
			{Name: "reports", Type: async.EventCallFinished, Time: now},
		}, got)
	})
}
