package operators_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/operators"
	"github.com/levee-go/levee/retry"
)

// flaky is a Source whose attempt n emits "a<n>", then fails while n <= failures.
func flaky(builds *atomic.Int32, failures int32) operators.Source {
	return func(ctx context.Context) (rxgo.Observable, error) {
		n := builds.Add(1)
		items := []any{fmt.Sprint("a", n)}
		if n <= failures {
			items = append(items, errBoom)
		}
		return newProbe(items...).Observable(), nil
	}
}

func TestRetryBuildsAFreshObservableForEachAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: time.Second})
		var builds atomic.Int32
		start := time.Now()
		got, _ := observe(operators.Retry(rt, flaky(&builds, 2)))
		assert.Equal(t, []string{"a1", "a2", "a3"}, got, "the items of failed attempts were already emitted")
		assert.Equal(t, int32(3), builds.Load())
		assert.Equal(t, 2*time.Second, time.Since(start))
		m := rt.Metrics()
		assert.Equal(t, int64(1), m.NumberOfSuccessfulCallsWithRetryAttempt)
		assert.Equal(t, int64(3), m.NumberOfTotalCalls)
	})
}

func TestRetryExhaustedEndsWithMaxRetriesExceeded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := newRetry(t, retry.Config{MaxAttempts: 2, WaitDuration: time.Second})
		var builds atomic.Int32
		got, items := observe(operators.Retry(rt, flaky(&builds, 9)))
		require.Len(t, got, 3)
		assert.Equal(t, []string{"a1", "a2"}, got[:2])
		err := items[2].E
		assert.ErrorIs(t, err, retry.ErrMaxRetriesExceeded)
		assert.ErrorIs(t, err, errBoom)
		var mre *retry.MaxRetriesExceededError
		require.ErrorAs(t, err, &mre)
		assert.Equal(t, 2, mre.Attempts)
		assert.Equal(t, int64(1), rt.Metrics().NumberOfFailedCallsWithRetryAttempt)
	})
}

func TestRetryBuildErrorsAndPanicsAreFailedAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
		var builds atomic.Int32
		src := func(ctx context.Context) (rxgo.Observable, error) {
			switch builds.Add(1) {
			case 1:
				return nil, errBoom
			case 2:
				panic("bug in the builder")
			}
			return rxgo.Just("ok")(), nil
		}
		var errs []error
		rt.Subscribe(func(e retry.Event) { errs = append(errs, e.LastErr) })
		got, _ := observe(operators.Retry(rt, src))
		assert.Equal(t, []string{"ok"}, got)
		require.Len(t, errs, 3) // RETRY, RETRY, SUCCESS
		assert.Same(t, errBoom, errs[0])
		var pe *levee.PanicError
		require.ErrorAs(t, errs[1], &pe)
		assert.Equal(t, "bug in the builder", pe.Value)
	})
}

func TestRetryOfASingleUseObservableIsRefusedNotCompleted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		once := rxgo.Create([]rxgo.Producer{func(_ context.Context, next chan<- rxgo.Item) {
			next <- rxgo.Of(1)
			next <- rxgo.Error(errBoom)
		}}, rxgo.WithContext(ctx))
		rt := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
		got, items := observe(operators.Retry(rt, func(context.Context) (rxgo.Observable, error) { return once, nil }))
		require.Len(t, got, 2)
		assert.Equal(t, "1", got[0])
		assert.ErrorIs(t, items[1].E, operators.ErrSingleUse)
		assert.ErrorIs(t, items[1].E, errBoom, "the attempt's own error is kept")
	})
}

// The pitfall the test above removes: rxgo's own Retry over Create swallows the error and
// completes as if the stream had succeeded.
func TestRxgoRetrySwallowsTheErrorOfASingleUseObservable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		once := rxgo.Create([]rxgo.Producer{func(_ context.Context, next chan<- rxgo.Item) {
			next <- rxgo.Of(1)
			next <- rxgo.Error(errBoom)
		}}, rxgo.WithContext(ctx))
		got, _ := observeCtx(ctx, once.Retry(3, func(error) bool { return true }, rxgo.WithContext(ctx)))
		assert.Equal(t, []string{"1"}, got)
	})
}

func TestRetryOnResultRestartsWithoutEmittingTheMatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: time.Second,
			RetryOnResultPredicate: func(v any) bool { return v == "stale" }})
		var builds atomic.Int32
		src := func(context.Context) (rxgo.Observable, error) {
			if builds.Add(1) == 1 {
				return rxgo.Just("a", "stale", "b")(), nil
			}
			return rxgo.Just("a", "fresh")(), nil
		}
		got, _ := observe(operators.Retry(rt, src))
		assert.Equal(t, []string{"a", "a", "fresh"}, got)
		assert.Equal(t, int32(2), builds.Load())
	})
}

func TestRetryOnResultOnTheLastAttemptEmitsTheMatchThenFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := newRetry(t, retry.Config{MaxAttempts: 2, WaitDuration: retry.NoWait, FailAfterMaxAttempts: true,
			RetryOnResultPredicate: func(v any) bool { return v == "stale" }})
		got, items := observe(operators.Retry(rt, func(context.Context) (rxgo.Observable, error) {
			return rxgo.Just("stale", "x")(), nil
		}))
		require.Len(t, got, 3)
		assert.Equal(t, []string{"stale", "x"}, got[:2])
		var mre *retry.MaxRetriesExceededError
		require.ErrorAs(t, items[2].E, &mre)
		assert.Equal(t, "stale", mre.LastResult)
	})
}

func TestRetryCancelDuringTheWaitRecordsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: time.Hour})
		var builds atomic.Int32
		start := time.Now()
		ctx, cancel := context.WithCancel(context.Background())
		ch := operators.Retry(rt, flaky(&builds, 9)).Observe(rxgo.WithContext(ctx))
		first := <-ch
		// Let the first attempt fail and the retry start its hour-long wait, then cancel: the
		// test must not race the cancellation against the attempt's error.
		synctest.Wait()
		cancel()
		var rest []rxgo.Item
		for it := range ch {
			rest = append(rest, it)
		}
		assert.Equal(t, "a1", show(first))
		assert.Empty(t, rest, "cancellation ends the subscription without an item")
		assert.Equal(t, int32(1), builds.Load())
		assert.Zero(t, time.Since(start), "the wait ended with the cancellation")
		assert.Equal(t, retry.Metrics{NumberOfTotalCalls: 1}, rt.Metrics(), "the failed attempt counted, no outcome recorded")
	})
}

func TestRetryDoesNotRetryRejections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb := newBreaker(t, circuitbreaker.Config{})
		require.NoError(t, cb.TransitionToForcedOpenState())
		rt := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
		var builds atomic.Int32
		_, items := observe(operators.Retry(rt, func(context.Context) (rxgo.Observable, error) {
			builds.Add(1)
			return operators.CircuitBreaker(cb)(rxgo.Just(1)()), nil
		}))
		require.Len(t, items, 1)
		assert.ErrorIs(t, items[0].E, circuitbreaker.ErrCallNotPermitted)
		assert.Equal(t, int32(1), builds.Load())
		assert.Equal(t, int64(1), rt.Metrics().NumberOfFailedCallsWithoutRetryAttempt)
	})
}

func TestRetryNilArguments(t *testing.T) {
	_, items := observe(operators.Retry(nil, func(context.Context) (rxgo.Observable, error) { return rxgo.Just(1)(), nil }))
	require.Len(t, items, 1)
	assert.ErrorIs(t, items[0].E, retry.ErrNilRetry)
	_, items = observe(operators.Retry(newRetry(t, retry.Config{}), nil))
	require.Len(t, items, 1)
	assert.ErrorIs(t, items[0].E, levee.ErrNilCall)
}
