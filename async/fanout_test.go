package async_test

import (
	"context"
	"errors"
	"fmt"
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
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
)

// Results come back in input order whatever the order of completion.
func TestAllReturnsResultsInInputOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := []levee.Call[int]{
			after(30*time.Millisecond, 0, nil),
			after(10*time.Millisecond, 1, nil),
			after(20*time.Millisecond, 2, nil),
		}
		start := time.Now()
		rs, err := async.All(context.Background(), nil, calls)
		require.NoError(t, err)
		assert.Equal(t, []async.Result[int]{{Value: 0}, {Value: 1}, {Value: 2}}, rs)
		assert.Equal(t, 30*time.Millisecond, time.Since(start), "the calls ran concurrently")
	})
}

func TestAllErrorIsTheLowestIndexedFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errLate := errors.New("late but first in input order")
		calls := []levee.Call[int]{
			value(0),
			after(20*time.Millisecond, 0, errLate),
			after(10*time.Millisecond, 0, errBoom),
		}
		rs, err := async.All(context.Background(), nil, calls)
		assert.Same(t, errLate, err)
		require.Len(t, rs, 3)
		assert.NoError(t, rs[0].Err)
		assert.Same(t, errLate, rs[1].Err)
		assert.Same(t, errBoom, rs[2].Err)
	})
}

// A call answered by the fallback has not failed: All reports no error and marks the answer.
func TestAllMarksFallbackAnswers(t *testing.T) {
	p := levee.Compose[string]().WithFallback(answering(t, "default"))
	rs, err := async.All(context.Background(), p, []levee.Call[string]{value("live"), failing[string](errBoom)})
	require.NoError(t, err)
	assert.Equal(t, []async.Result[string]{
		{Value: "live"},
		{Value: "default", Outcome: fallback.Outcome{Fallback: true, Cause: errBoom}},
	}, rs)
}

// FailFast: the first failure cancels the calls still running; they release their permits and
// the breaker records only the failure; All returns that failure once they have returned.
func TestAllFailFastCancelsTheRest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb := bigBreaker(t)
		bh := newBulkhead(t, 5)
		p := levee.Compose[int]().WithBulkhead(bh).WithCircuitBreaker(cb)
		slow := newBlocker(1, nil)
		calls := []levee.Call[int]{slow.call, slow.call, after(10*time.Millisecond, 0, errBoom), slow.call, slow.call}
		start := time.Now()
		rs, err := async.All(context.Background(), p, calls, async.FailFast())
		assert.Same(t, errBoom, err)
		assert.Equal(t, 10*time.Millisecond, time.Since(start))
		for i, r := range rs {
			if i == 2 {
				assert.Same(t, errBoom, r.Err)
				continue
			}
			assert.ErrorIs(t, r.Err, context.Canceled, "call %d", i)
			assert.NotErrorIs(t, r.Err, async.ErrNotStarted, "call %d had started", i)
		}
		assert.Equal(t, int64(4), slow.cancelled.Load())
		assert.Equal(t, int64(4), slow.returned.Load(), "All returned after every call it started")
		assert.Equal(t, [3]int{0, 1, 0}, breakerCounts(cb))
		assert.Equal(t, 5, bh.Metrics().AvailableConcurrentCalls)
	})
}

// With MaxConcurrency, FailFast starts nothing after the failure: exactly the calls started
// before it ran.
func TestAllFailFastWithMaxConcurrencyStartsNothingMore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var invoked atomic.Int64
		calls := make([]levee.Call[int], 10)
		for i := range calls {
			calls[i] = func(ctx context.Context) (int, error) {
				invoked.Add(1)
				if i == 3 {
					return 0, errBoom
				}
				return after(time.Duration(i+1)*time.Millisecond, i, nil)(ctx)
			}
		}
		rs, err := async.All(context.Background(), nil, calls, async.MaxConcurrency(2), async.FailFast())
		assert.Same(t, errBoom, err)
		// 0 and 1 start; 0 ends at 1ms, 2 starts; 1 ends at 2ms, 3 starts and fails at once,
		// cancelling 2; 4..9 never start.
		assert.Equal(t, int64(4), invoked.Load())
		assert.Equal(t, 0, rs[0].Value)
		assert.Equal(t, 1, rs[1].Value)
		assert.ErrorIs(t, rs[2].Err, context.Canceled)
		assert.NotErrorIs(t, rs[2].Err, async.ErrNotStarted)
		for i := 4; i < 10; i++ {
			assert.ErrorIs(t, rs[i].Err, async.ErrNotStarted, "call %d", i)
			assert.ErrorIs(t, rs[i].Err, context.Canceled, "call %d", i)
			assert.NotErrorIs(t, rs[i].Err, errBoom, "call %d was refused by nothing", i)
			assert.EqualError(t, rs[i].Err, "async: call not started: context canceled: the fan-out stopped at a failure (FailFast): "+errBoom.Error(), "call %d", i)
		}
	})
}

func TestAllMaxConcurrencyBoundsTheCallsRunningAndStartsThemInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var running, peak int
		startedAt := make([]time.Duration, 10)
		start := time.Now()
		calls := make([]levee.Call[int], 10)
		for i := range calls {
			calls[i] = func(ctx context.Context) (int, error) {
				mu.Lock()
				startedAt[i] = time.Since(start)
				running++
				peak = max(peak, running)
				mu.Unlock()
				time.Sleep(time.Duration(10-i) * time.Millisecond)
				mu.Lock()
				running--
				mu.Unlock()
				return i * i, nil
			}
		}
		rs, err := async.All(context.Background(), nil, calls, async.MaxConcurrency(3))
		require.NoError(t, err)
		assert.Equal(t, 3, peak)
		// Call i takes 10-i ms. 0, 1 and 2 start at once; 3, 4 and 5 take the slots freed by
		// 2, 1 and 0 at 8, 9 and 10ms; 6, 7 and 8 those freed by 3, 4 and 5, all at 15ms; 9
		// that of 8 at 17ms. A call never starts before an earlier one.
		ms := time.Millisecond
		assert.Equal(t, []time.Duration{0, 0, 0, 8 * ms, 9 * ms, 10 * ms, 15 * ms, 15 * ms, 15 * ms, 17 * ms}, startedAt)
		for i, r := range rs {
			assert.Equal(t, i*i, r.Value)
		}
	})
}

// Cancelling the parent cancels the calls running and starts no other; those report an error
// matching both ErrNotStarted and the parent's error.
func TestAllParentCancellationLeavesTheRestNotStarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Millisecond)
		defer cancel()
		calls := make([]levee.Call[int], 5)
		for i := range calls {
			calls[i] = after(10*time.Millisecond, i, nil)
		}
		rs, err := async.All(ctx, nil, calls, async.MaxConcurrency(1))
		assert.Equal(t, 0, rs[0].Value)
		assert.Equal(t, context.DeadlineExceeded, rs[1].Err, "the second call was cancelled at 15ms")
		assert.Equal(t, context.DeadlineExceeded, err)
		for i := 2; i < 5; i++ {
			assert.ErrorIs(t, rs[i].Err, async.ErrNotStarted)
			assert.ErrorIs(t, rs[i].Err, context.DeadlineExceeded)
			assert.Equal(t, "async: call not started: context deadline exceeded", rs[i].Err.Error())
		}
	})
}

func TestAllWithAnEndedContextStartsNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var invoked atomic.Int64
	call := func(context.Context) (int, error) { invoked.Add(1); return 0, nil }
	for _, opts := range [][]async.Option{nil, {async.MaxConcurrency(1)}} {
		rs, err := async.All(ctx, nil, []levee.Call[int]{call, call}, opts...)
		assert.ErrorIs(t, err, async.ErrNotStarted)
		assert.Len(t, rs, 2)
	}
	assert.Zero(t, invoked.Load())
}

func TestAllNilCallFailsWithoutRunningThePipeline(t *testing.T) {
	cb := bigBreaker(t)
	p := levee.Compose[int]().WithCircuitBreaker(cb)
	rs, err := async.All(context.Background(), p, []levee.Call[int]{value(1), nil})
	assert.Same(t, levee.ErrNilCall, err)
	assert.Equal(t, 1, rs[0].Value)
	assert.Same(t, levee.ErrNilCall, rs[1].Err)
	assert.Equal(t, [3]int{1, 0, 0}, breakerCounts(cb))
}

func TestAllOfNothing(t *testing.T) {
	rs, err := async.All[int](context.Background(), nil, nil)
	assert.NoError(t, err)
	assert.Empty(t, rs)
}

func TestAllPanicInACallIsItsResult(t *testing.T) {
	rs, err := async.All(context.Background(), nil, []levee.Call[int]{
		value(1), func(context.Context) (int, error) { panic("one bad call") },
	})
	var pe *levee.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "one bad call", pe.Value)
	assert.Equal(t, 1, rs[0].Value)
}

func TestInvalidOptionsRunNothing(t *testing.T) {
	var invoked atomic.Int64
	call := func(context.Context) (int, error) { invoked.Add(1); return 0, nil }
	for _, n := range []int{0, -1} {
		want := fmt.Sprintf("async: MaxConcurrency must be >= 1, got %d", n)
		_, err := async.All(context.Background(), nil, []levee.Call[int]{call}, async.MaxConcurrency(n))
		assert.EqualError(t, err, want)
		_, err = async.Map(context.Background(), nil, func(ctx context.Context, i int) (int, error) { return call(ctx) },
			[]int{1}, async.MaxConcurrency(n))
		assert.EqualError(t, err, want)
		_, _, err = async.FirstSuccess(context.Background(), nil, []levee.Call[int]{call}, async.MaxConcurrency(n))
		assert.EqualError(t, err, want)
	}
	assert.Zero(t, invoked.Load())
}

func TestMapAppliesTheFunctionToEveryInput(t *testing.T) {
	cb := bigBreaker(t)
	p := levee.Compose[string]().WithCircuitBreaker(cb).WithFallback(answering(t, "?"))
	isbns := []string{"0-13", "BAD", "0-20"}
	rs, err := async.Map(context.Background(), p, func(ctx context.Context, isbn string) (string, error) {
		if isbn == "BAD" {
			return "", errBoom
		}
		return "price of " + isbn, nil
	}, isbns, async.MaxConcurrency(2))
	require.NoError(t, err)
	assert.Equal(t, []async.Result[string]{
		{Value: "price of 0-13"},
		{Value: "?", Outcome: fallback.Outcome{Fallback: true, Cause: errBoom}},
		{Value: "price of 0-20"},
	}, rs)
	assert.Equal(t, [3]int{2, 1, 0}, breakerCounts(cb))
}

func TestMapNilFunction(t *testing.T) {
	rs, err := async.Map[int, int](context.Background(), nil, nil, []int{1})
	assert.Nil(t, rs)
	assert.Same(t, levee.ErrNilCall, err)
}

// ItemContext gives each call a context of its own, which the whole guarded execution sees:
// here the key of a LastKnown cache that the fallback serves.
func TestItemContextReachesTheFallback(t *testing.T) {
	var prices fallback.LastKnown[string, int]
	prices.Put("a", 100)
	prices.Put("c", 300)
	fb, err := fallback.New("prices", fallback.OnAny(prices.Serve(func(v int) int { return -v })))
	require.NoError(t, err)
	skus := []string{"a", "b", "c"}
	rs, err := async.Map(context.Background(), levee.Compose[int]().WithFallback(fb),
		func(ctx context.Context, sku string) (int, error) { return 0, errBoom }, skus,
		async.ItemContext(func(ctx context.Context, i int) context.Context { return prices.WithKey(ctx, skus[i]) }))
	assert.ErrorIs(t, err, fallback.ErrNoLastKnown, "b has no last known price")
	assert.Equal(t, -100, rs[0].Value)
	assert.True(t, rs[0].Outcome.Fallback)
	assert.ErrorIs(t, rs[1].Err, fallback.ErrNoLastKnown)
	assert.ErrorIs(t, rs[1].Err, errBoom, "the failed fallback keeps its cause")
	assert.Equal(t, -300, rs[2].Value)
}

func TestItemContextReturningNilKeepsTheFanOutsContext(t *testing.T) {
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "parent")
	rs, err := async.All(ctx, nil, []levee.Call[string]{func(ctx context.Context) (string, error) {
		return ctx.Value(key{}).(string), nil
	}}, async.ItemContext(func(context.Context, int) context.Context { return nil }), async.ItemContext(nil))
	require.NoError(t, err)
	assert.Equal(t, "parent", rs[0].Value)
}

// N tasks share one breaker: once it opens, the rest are refused without reaching the
// dependency, and the fallback answers them.
func TestFanOutSharesOneBreaker(t *testing.T) {
	cb := newBreaker(t, circuitbreaker.Config{SlidingWindowSize: 4, MinimumNumberOfCalls: 4})
	p := levee.Compose[int]().WithCircuitBreaker(cb).WithFallback(answering(t, -1))
	var reached atomic.Int64
	inputs := make([]int, 10)
	rs, err := async.Map(context.Background(), p, func(ctx context.Context, i int) (int, error) {
		reached.Add(1)
		return 0, errBoom
	}, inputs, async.MaxConcurrency(1))
	require.NoError(t, err)
	assert.Equal(t, int64(4), reached.Load())
	assert.Equal(t, circuitbreaker.Open, cb.State())
	for i, r := range rs {
		assert.Equal(t, -1, r.Value)
		if i < 4 {
			assert.Same(t, errBoom, r.Outcome.Cause)
		} else {
			assert.ErrorIs(t, r.Outcome.Cause, circuitbreaker.ErrCallNotPermitted, "call %d", i)
		}
	}
	assert.Equal(t, 6, cb.Metrics().NumberOfNotPermittedCalls)
}

// A fallback's answer is not a failure: FailFast does not stop the fan-out for it.
func TestFailFastIgnoresFallbackAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := levee.Compose[int]().WithFallback(answering(t, -1))
		rs, err := async.All(context.Background(), p, []levee.Call[int]{
			failing[int](errBoom), after(10*time.Millisecond, 2, nil),
		}, async.FailFast())
		require.NoError(t, err)
		assert.Equal(t, -1, rs[0].Value)
		assert.Equal(t, 2, rs[1].Value, "the second call was not cancelled")
	})
}

// Whatever leaves a fan-out's goroutine abnormally becomes that call's result: a panic in
// ItemContext, a call that calls runtime.Goexit.
func TestFanOutGoroutinesNeverDieSilently(t *testing.T) {
	rs, err := async.All(context.Background(), nil, []levee.Call[int]{value(1), value(2)},
		async.ItemContext(func(ctx context.Context, i int) context.Context {
			if i == 1 {
				panic("bad context")
			}
			return ctx
		}))
	var pe *levee.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 1, rs[0].Value)

	exits := func(context.Context) (int, error) { runtime.Goexit(); return 0, nil }
	rs, err = async.All(context.Background(), nil, []levee.Call[int]{exits})
	assert.ErrorContains(t, err, "exited without returning")
	assert.Len(t, rs, 1)
	_, _, err = async.FirstSuccess(context.Background(), nil, []levee.Call[int]{exits})
	assert.ErrorContains(t, err, "exited without returning")
	_, _, err = async.Hedge(context.Background(), nil, exits, time.Millisecond, 0)
	assert.ErrorContains(t, err, "exited without returning")
}
