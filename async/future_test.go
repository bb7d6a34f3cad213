package async_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/timelimiter"
)

func TestGoCompletesWithTheCallsValue(t *testing.T) {
	cb := bigBreaker(t)
	p := levee.Compose[int]().WithCircuitBreaker(cb)
	f := async.Go(context.Background(), p, value(42))
	v, err := f.Get(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 42, v)
	select {
	case <-f.Done():
	default:
		t.Fatal("Done is not closed after Get returned")
	}
	r, ok := f.Result()
	assert.True(t, ok)
	assert.Equal(t, async.Result[int]{Value: 42}, r)
	assert.Equal(t, fallback.Outcome{}, f.Outcome())
	assert.Equal(t, [3]int{1, 0, 0}, breakerCounts(cb))
}

func TestGoKeepsTheCallsErrorUnchanged(t *testing.T) {
	cb := bigBreaker(t)
	f := async.Go(context.Background(), levee.Compose[int]().WithCircuitBreaker(cb), failing[int](errBoom))
	_, err := f.Get(context.Background())
	assert.Same(t, errBoom, err, "the user's error is returned as it is")
	assert.Equal(t, [3]int{0, 1, 0}, breakerCounts(cb))
}

func TestGoMarksTheFallbacksAnswer(t *testing.T) {
	p := levee.Compose[string]().WithFallback(answering(t, "cached"))
	f := async.Go(context.Background(), p, failing[string](errBoom))
	v, err := f.Get(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "cached", v)
	assert.Equal(t, fallback.Outcome{Fallback: true, Cause: errBoom}, f.Outcome())
	r, _ := f.Result()
	assert.Equal(t, async.Result[string]{Value: "cached", Outcome: fallback.Outcome{Fallback: true, Cause: errBoom}}, r)
}

// A panic in the call is recorded by the breaker as a failure and reaches the fallback as a
// *levee.PanicError, on a goroutine where nobody else could have recovered it.
func TestGoPanicInTheCallReachesTheFallback(t *testing.T) {
	cb := bigBreaker(t)
	var seen error
	fb, err := fallback.New("fb", fallback.OnType(func(ctx context.Context, pe *levee.PanicError) (string, error) {
		seen = pe
		return "recovered", nil
	}))
	require.NoError(t, err)
	p := levee.Compose[string]().WithCircuitBreaker(cb).WithFallback(fb)
	f := async.Go(context.Background(), p, func(context.Context) (string, error) { panic("kaboom") })
	v, err := f.Get(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "recovered", v)
	var pe *levee.PanicError
	require.ErrorAs(t, seen, &pe)
	assert.Equal(t, "kaboom", pe.Value)
	assert.True(t, f.Outcome().Fallback)
	assert.Equal(t, [3]int{0, 1, 0}, breakerCounts(cb))
}

func TestGoPanicWithoutFallbackIsAPanicError(t *testing.T) {
	f := async.Go(context.Background(), nil, func(context.Context) (int, error) { panic(errBoom) })
	_, err := f.Get(context.Background())
	var pe *levee.PanicError
	require.ErrorAs(t, err, &pe)
	assert.ErrorIs(t, err, errBoom, "a panic value that is an error stays in the chain")
}

// Seed, fallbacks for asynchronous types: with a CompletableFuture, "the aspect turns the throw
// into a failed stage, so the fallback is called". GoLazy builds the call inside the guarded
// execution, so an error or a panic while building reaches the fallback.
func TestCompletableFutureThrowWhileBuildingReachesTheFallback(t *testing.T) {
	for _, tc := range []struct {
		name      string
		build     func(context.Context) (levee.Call[string], error)
		wantCause func(t *testing.T, err error)
	}{
		{"error", func(context.Context) (levee.Call[string], error) { return nil, errBuild },
			func(t *testing.T, err error) { assert.Same(t, errBuild, err) }},
		{"panic", func(context.Context) (levee.Call[string], error) { panic("no connection") },
			func(t *testing.T, err error) {
				var pe *levee.PanicError
				require.ErrorAs(t, err, &pe)
				assert.Equal(t, "no connection", pe.Value)
			}},
		{"nil call", func(context.Context) (levee.Call[string], error) { return nil, nil },
			func(t *testing.T, err error) { assert.Same(t, levee.ErrNilCall, err) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cb := bigBreaker(t)
			p := levee.Compose[string]().WithCircuitBreaker(cb).WithFallback(answering(t, "stale"))
			f := async.GoLazy(context.Background(), p, tc.build)
			v, err := f.Get(context.Background())
			require.NoError(t, err)
			assert.Equal(t, "stale", v)
			out := f.Outcome()
			assert.True(t, out.Fallback)
			tc.wantCause(t, out.Cause)
			assert.Equal(t, [3]int{0, 1, 0}, breakerCounts(cb), "the breaker recorded the failure to build")
		})
	}
}

func TestGoLazyBuildsOncePerAttempt(t *testing.T) {
	builds, calls := 0, 0
	p := levee.Compose[int]().WithRetry(newRetry(t, 3))
	f := async.GoLazy(context.Background(), p, func(context.Context) (levee.Call[int], error) {
		builds++
		return func(context.Context) (int, error) {
			calls++
			if calls < 3 {
				return 0, errBoom
			}
			return calls, nil
		}, nil
	})
	v, err := f.Get(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 3, v)
	assert.Equal(t, 3, builds)
}

func TestGoLazyRunsTheCallWithTheBuildersContext(t *testing.T) {
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "request-7")
	f := async.GoLazy(ctx, nil, func(ctx context.Context) (levee.Call[string], error) {
		return func(ctx context.Context) (string, error) { return ctx.Value(key{}).(string), nil }, nil
	})
	v, err := f.Get(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "request-7", v)
}

// A nil call is a mistake, not a failure of the dependency: nothing runs, nothing is
// recorded, no fallback answers.
func TestGoNilCallAndNilBuild(t *testing.T) {
	cb := bigBreaker(t)
	p := levee.Compose[int]().WithCircuitBreaker(cb).WithFallback(answering(t, 7))
	for _, f := range []*async.Future[int]{
		async.Go(context.Background(), p, nil),
		async.GoLazy(context.Background(), p, nil),
	} {
		r, ok := f.Result()
		require.True(t, ok, "completed at once")
		assert.Same(t, levee.ErrNilCall, r.Err)
		assert.False(t, r.Outcome.Fallback)
		f.Cancel() // harmless
	}
	assert.Equal(t, [3]int{0, 0, 0}, breakerCounts(cb))
}

func TestGoNilContextAndNilPipeline(t *testing.T) {
	//nolint:staticcheck // a nil context is part of the contract
	f := async.Go(nil, nil, value("ok"))
	v, err := f.Get(nil) //nolint:staticcheck
	require.NoError(t, err)
	assert.Equal(t, "ok", v)
}

// Get honours its context: it returns the context's error when it ends first, and the future
// keeps running, so a later Get still gets the value.
func TestGetHonoursItsContextAndTheFutureKeepsRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := async.Go(context.Background(), nil, after(100*time.Millisecond, "late", nil))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := f.Get(ctx)
		assert.Equal(t, context.DeadlineExceeded, err)
		assert.Equal(t, 30*time.Millisecond, time.Since(start))
		_, ok := f.Result()
		assert.False(t, ok, "giving up waiting does not complete the future")

		v, err := f.Get(context.Background())
		require.NoError(t, err)
		assert.Equal(t, "late", v)
		assert.Equal(t, 100*time.Millisecond, time.Since(start))
	})
}

func TestGetPrefersACompletedResultToAnEndedContext(t *testing.T) {
	f := async.Go(context.Background(), nil, value(1))
	<-f.Done()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 100 {
		v, err := f.Get(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, v)
	}
}

func TestResultDoesNotBlock(t *testing.T) {
	b := newBlocker("v", nil)
	f := async.Go(context.Background(), nil, b.call)
	b.awaitStart(t, 1)
	r, ok := f.Result()
	assert.False(t, ok)
	assert.Equal(t, async.Result[string]{}, r)
	assert.Equal(t, fallback.Outcome{}, f.Outcome())
	b.unblock()
	<-f.Done()
	r, ok = f.Result()
	assert.True(t, ok)
	assert.Equal(t, "v", r.Value)
}

// Resilience4j 1.9, CompletionStage and Future decorators: a cancelled call releases its
// permission and records nothing. Here the breaker is HALF_OPEN with one probe: the future takes
// it, Cancel gives it back (a second probe is admitted), the bulkhead's permit is back, the
// breaker recorded nothing and the fallback did not answer a cancellation nobody waits for.
func TestFutureCancellationReleasesPermits(t *testing.T) {
	cb := newBreaker(t, circuitbreaker.Config{
		PermittedNumberOfCallsInHalfOpenState: 1, InitialState: circuitbreaker.HalfOpen,
	})
	bh := newBulkhead(t, 1)
	fb := answering(t, "fallback")
	p := levee.Compose[string]().WithBulkhead(bh).WithCircuitBreaker(cb).WithFallback(fb)

	b := newBlocker("live", nil)
	f := async.Go(context.Background(), p, b.call)
	b.awaitStart(t, 1)
	assert.Equal(t, 0, bh.Metrics().AvailableConcurrentCalls)
	require.ErrorIs(t, tryAcquire(cb), circuitbreaker.ErrCallNotPermitted, "the probe is taken")

	f.Cancel()
	_, err := f.Get(context.Background())
	assert.ErrorIs(t, err, context.Canceled)
	assert.False(t, f.Outcome().Fallback, "nobody waits for a cancelled call's fallback")
	assert.Equal(t, int64(1), b.cancelled.Load(), "the call saw its context cancelled")
	assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)
	assert.Equal(t, circuitbreaker.HalfOpen, cb.State())
	m := cb.Metrics()
	assert.Equal(t, 0, m.NumberOfBufferedCalls, "nothing recorded")
	require.NoError(t, tryAcquire(cb), "the probe was given back")
	assert.Equal(t, fallback.Metrics{}, fb.Metrics())
}

func TestCancellingTheParentContextCancelsTheFuture(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	b := newBlocker(0, nil)
	f := async.Go(ctx, nil, b.call)
	b.awaitStart(t, 1)
	cancel()
	_, err := f.Get(context.Background())
	assert.Same(t, context.Canceled, err)
}

func TestCancelAfterCompletionChangesNothing(t *testing.T) {
	f := async.Go(context.Background(), nil, value(5))
	<-f.Done()
	f.Cancel()
	v, err := f.Get(context.Background())
	assert.NoError(t, err)
	assert.Equal(t, 5, v)
}

// Resilience4j: TimeLimiter with futures, cancelRunningFuture: at the deadline the future
// completes with the timeout and the call's context is cancelled.
func TestTimeLimiterCancelsTheRunningFuture(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTimeLimiter(t, 100*time.Millisecond)
		var callErr error
		f := async.Go(context.Background(), levee.Compose[int]().WithTimeLimiter(tl),
			func(ctx context.Context) (int, error) {
				<-ctx.Done()
				callErr = ctx.Err()
				return 0, ctx.Err()
			})
		start := time.Now()
		_, err := f.Get(context.Background())
		assert.ErrorIs(t, err, timelimiter.ErrTimeout)
		assert.Equal(t, 100*time.Millisecond, time.Since(start))
		synctest.Wait()
		assert.Equal(t, context.DeadlineExceeded, callErr)
		assert.Equal(t, int64(1), tl.Metrics().NumberOfTimedOutCalls)
	})
}

// A TimeLimiter lets a future complete at its deadline even when the call ignores its context;
// the call's goroutine ends when the call returns.
func TestTimeLimiterCompletesTheFutureOfACallThatIgnoresItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTimeLimiter(t, 50*time.Millisecond)
		f := async.Go(context.Background(), levee.Compose[int]().WithTimeLimiter(tl),
			func(ctx context.Context) (int, error) {
				time.Sleep(time.Second) // deaf to ctx
				return 1, nil
			})
		start := time.Now()
		_, err := f.Get(context.Background())
		assert.ErrorIs(t, err, timelimiter.ErrTimeout)
		assert.Equal(t, 50*time.Millisecond, time.Since(start))
		assert.Equal(t, 1, tl.Metrics().NumberOfAbandonedCalls)
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, 0, tl.Metrics().NumberOfAbandonedCalls)
	})
}

func TestRetryRetriesTheFuturesWork(t *testing.T) {
	calls := 0
	f := async.Go(context.Background(), levee.Compose[string]().WithRetry(newRetry(t, 3)),
		func(context.Context) (string, error) {
			calls++
			if calls < 3 {
				return "", errBoom
			}
			return "third time", nil
		})
	v, err := f.Get(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "third time", v)
	assert.Equal(t, 3, calls)
}

// A call that leaves by runtime.Goexit (t.FailNow in a test helper, say) still completes its
// future, so nobody waits forever.
func TestGoexitInTheCallCompletesTheFuture(t *testing.T) {
	f := async.Go(context.Background(), nil, func(context.Context) (int, error) {
		runtime.Goexit()
		return 0, nil
	})
	_, err := f.Get(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exited without returning")
}

func TestNilFuture(t *testing.T) {
	var f *async.Future[int]
	_, err := f.Get(context.Background())
	assert.Same(t, async.ErrNilFuture, err)
	<-f.Done() // closed: does not block
	r, ok := f.Result()
	assert.True(t, ok)
	assert.Same(t, async.ErrNilFuture, r.Err)
	assert.Equal(t, fallback.Outcome{}, f.Outcome())
	f.Cancel()
}

// Many goroutines wait on one future; all see the same single result.
func TestManyWaitersSeeOneResult(t *testing.T) {
	b := newBlocker(9, nil)
	f := async.Go(context.Background(), nil, b.call)
	const n = 32
	got := make(chan int, n)
	for range n {
		go func() {
			v, _ := f.Get(context.Background())
			got <- v
		}()
	}
	b.unblock()
	for range n {
		assert.Equal(t, 9, <-got)
	}
	assert.Equal(t, int64(1), b.startedN.Load())
}

func TestGoThroughAFullBulkheadFailsWithItsRejection(t *testing.T) {
	bh := newBulkhead(t, 1)
	b := newBlocker(1, nil)
	p := levee.Compose[int]().WithBulkhead(bh)
	first := async.Go(context.Background(), p, b.call)
	b.awaitStart(t, 1)
	_, err := async.Go(context.Background(), p, value(2)).Get(context.Background())
	assert.ErrorIs(t, err, bulkhead.ErrBulkheadFull)
	assert.True(t, levee.IsRejection(err))
	b.unblock()
	v, err := first.Get(context.Background())
	assert.NoError(t, err)
	assert.Equal(t, 1, v)
	assert.False(t, errors.Is(err, bulkhead.ErrBulkheadFull))
}
