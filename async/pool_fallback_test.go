package async_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/retry"
)

// fullPool returns a pool of one worker and no queue, busy with a call until release.
func fullPool(t *testing.T) (pool *async.WorkerPool, release func()) {
	t.Helper()
	pool = newPool(t, async.WorkerPoolConfig{CoreThreadPoolSize: 1, MaxThreadPoolSize: 1, QueueCapacity: async.NoQueue})
	b := newBlocker(0, nil)
	busy, err := async.Submit(context.Background(), pool, nil, b.call)
	require.NoError(t, err)
	b.awaitStart(t, 1)
	return pool, func() {
		b.unblock()
		_, _ = busy.Get(context.Background())
	}
}

// A full worker pool returned (nil, error), so the pipeline's fallback never saw the refusal
// (Resilience4j's bug #596), while a semaphore bulkhead's refusal inside the pipeline reaches
// it. Now both give a completed future holding the fallback's answer.
func TestSubmitToAFullPoolReachesTheFallback(t *testing.T) {
	pool, release := fullPool(t)
	defer release()
	cb, rt := bigBreaker(t), newRetry(t, 3)
	events := recordEvents(pool)
	p := levee.DefaultPipeline(levee.Patterns{Retry: rt, CircuitBreaker: cb}, answering(t, -1))
	ran := false
	f, err := async.Submit(context.Background(), pool, p, func(context.Context) (int, error) { ran = true; return 1, nil })
	require.NoError(t, err, "the fallback answered")
	require.NotNil(t, f)
	r, done := f.Result()
	require.True(t, done, "completed before Submit returned")
	assert.Equal(t, -1, r.Value)
	assert.NoError(t, r.Err)
	assert.True(t, r.Outcome.Fallback)
	var full *async.WorkerPoolFullError
	require.ErrorAs(t, r.Outcome.Cause, &full)
	assert.Equal(t, "pool", full.Name)
	assert.ErrorIs(t, r.Outcome.Cause, bulkhead.ErrBulkheadFull)
	v, err := f.Get(context.Background())
	assert.Equal(t, -1, v)
	assert.NoError(t, err)
	assert.False(t, ran)
	assert.Equal(t, [3]int{0, 0, 0}, breakerCounts(cb), "the call never reached the breaker")
	assert.Equal(t, retry.Metrics{}, rt.Metrics(), "nor the retry")
	assert.Equal(t, []async.WorkerPoolEventType{async.EventCallRejected}, events.get())

	// The same pipeline with a semaphore bulkhead that refuses, through Go: the same answer.
	bh := newBulkhead(t, 1)
	require.NoError(t, bh.Acquire(context.Background()))
	defer bh.Release()
	g := async.Go(context.Background(), levee.DefaultPipeline(levee.Patterns{Bulkhead: bh}, answering(t, -1)), value(1))
	gv, gerr := g.Get(context.Background())
	assert.Equal(t, -1, gv)
	assert.NoError(t, gerr)
	assert.True(t, g.Outcome().Fallback)
	assert.ErrorIs(t, g.Outcome().Cause, bulkhead.ErrBulkheadFull)
}

func TestSubmitToAFullPoolWithoutAnAnswer(t *testing.T) {
	errFallback := errors.New("no cached value")
	declining, err := fallback.New("fb", fallback.OnAny(func(context.Context, error) (int, error) { return 0, errFallback }))
	require.NoError(t, err)
	onlyOther, err := fallback.New("fb", fallback.OnError(errBoom, fallback.Value(-1)))
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		p       *levee.Pipeline[int]
		wantMsg string
	}{
		{"no pipeline", nil, "async: WorkerPool 'pool' is full and does not permit further calls"},
		{"a fallback for other errors", levee.DefaultPipeline(levee.Patterns{}, onlyOther),
			"async: WorkerPool 'pool' is full and does not permit further calls"},
		{"a fallback that fails", levee.DefaultPipeline(levee.Patterns{}, declining),
			`fallback "fb": no cached value (cause: async: WorkerPool 'pool' is full and does not permit further calls)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool, release := fullPool(t)
			defer release()
			f, err := async.Submit(context.Background(), pool, tc.p, value(1))
			require.Error(t, err)
			assert.Equal(t, tc.wantMsg, err.Error())
			assert.ErrorIs(t, err, bulkhead.ErrBulkheadFull, "Submit's error matches the refusal")
			require.NotNil(t, f, "a completed future, not nil")
			v, ferr := f.Get(context.Background())
			assert.Equal(t, 0, v)
			assert.Same(t, err, ferr, "the future holds the same error")
			assert.False(t, f.Outcome().Fallback)
		})
	}
}

// Fallbacks of an explicit composition answer innermost first, as they would a failure of the
// call inside them.
func TestSubmitToAFullPoolInnermostFallbackFirst(t *testing.T) {
	pool, release := fullPool(t)
	defer release()
	inner, err := fallback.New("inner", fallback.OnError(bulkhead.ErrBulkheadFull, fallback.Value(1)))
	require.NoError(t, err)
	outer := answering(t, 2)
	p := levee.Compose[int]().WithFallback(inner).WithCircuitBreaker(bigBreaker(t)).WithFallback(outer)
	f, err := async.Submit(context.Background(), pool, p, value(0))
	require.NoError(t, err)
	v, err := f.Get(context.Background())
	assert.NoError(t, err)
	assert.Equal(t, 1, v)
	assert.Equal(t, fallback.Metrics{NumberOfFallbackAnswers: 1}, inner.Metrics())
	assert.Equal(t, fallback.Metrics{}, outer.Metrics(), "the inner fallback answered; the outer saw a success")
}
