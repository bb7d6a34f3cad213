package async_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/fallback"
)

// The fastest live success wins; the other calls are cancelled, release their permits, are not
// recorded, and FirstSuccess returns once they have returned.
func TestFirstSuccessReturnsTheFastestSuccessAndCancelsTheRest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb := bigBreaker(t)
		bh := newBulkhead(t, 3)
		p := levee.Compose[string]().WithBulkhead(bh).WithCircuitBreaker(cb)
		slow := newBlocker("slow", nil)
		start := time.Now()
		v, out, err := async.FirstSuccess(context.Background(), p, []levee.Call[string]{
			slow.call, after(20*time.Millisecond, "replica-2", nil), slow.call,
		})
		require.NoError(t, err)
		assert.Equal(t, "replica-2", v)
		assert.Equal(t, fallback.Outcome{}, out)
		assert.Equal(t, 20*time.Millisecond, time.Since(start))
		assert.Equal(t, int64(2), slow.cancelled.Load())
		assert.Equal(t, int64(2), slow.returned.Load())
		assert.Equal(t, [3]int{1, 0, 0}, breakerCounts(cb), "the cancelled losers are not recorded")
		assert.Equal(t, 3, bh.Metrics().AvailableConcurrentCalls)
	})
}

// A failure, or a fallback's answer, does not win while a live success may still come.
func TestFirstSuccessWaitsPastFailuresAndFallbackAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := levee.Compose[string]().WithFallback(answering(t, "stale"))
		start := time.Now()
		v, out, err := async.FirstSuccess(context.Background(), p, []levee.Call[string]{
			after(10*time.Millisecond, "", errBoom),
			after(30*time.Millisecond, "live", nil),
		})
		require.NoError(t, err)
		assert.Equal(t, "live", v)
		assert.False(t, out.Fallback)
		assert.Equal(t, 30*time.Millisecond, time.Since(start))
	})
}

func TestFirstSuccessFallsBackToTheAnswerOfTheLowestIndex(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errFirst := errors.New("first")
		p := levee.Compose[string]().WithFallback(answering(t, "stale"))
		v, out, err := async.FirstSuccess(context.Background(), p, []levee.Call[string]{
			after(30*time.Millisecond, "", errFirst),
			after(10*time.Millisecond, "", errBoom),
		})
		require.NoError(t, err)
		assert.Equal(t, "stale", v)
		assert.Equal(t, fallback.Outcome{Fallback: true, Cause: errFirst}, out)
	})
}

func TestFirstSuccessJoinsEveryFailureInInputOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errFirst := errors.New("first")
		_, _, err := async.FirstSuccess(context.Background(), nil, []levee.Call[int]{
			after(30*time.Millisecond, 0, errFirst),
			after(10*time.Millisecond, 0, errBoom),
		})
		assert.ErrorIs(t, err, errFirst)
		assert.ErrorIs(t, err, errBoom)
		assert.Equal(t, "first\nboom", err.Error())
	})
}

func TestFirstSuccessOfOneFailedCallReturnsItsErrorUnchanged(t *testing.T) {
	_, _, err := async.FirstSuccess(context.Background(), nil, []levee.Call[int]{failing[int](errBoom)})
	assert.Same(t, errBoom, err)
	_, _, err = async.FirstSuccess(context.Background(), nil, []levee.Call[int]{nil})
	assert.Same(t, levee.ErrNilCall, err)
}

// With FailFast the first call to complete decides, even when it failed.
func TestFirstSuccessFailFastTakesTheFirstCompletion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := newBlocker(1, nil)
		_, _, err := async.FirstSuccess(context.Background(), nil, []levee.Call[int]{
			slow.call, after(10*time.Millisecond, 0, errBoom),
		}, async.FailFast())
		assert.Same(t, errBoom, err)
		assert.Equal(t, int64(1), slow.cancelled.Load())
	})
}

// With MaxConcurrency(1) the replicas are tried one after the other, each failure starting
// the next, and the first success stops the rest from starting.
func TestFirstSuccessMaxConcurrencyTriesInTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var invoked atomic.Int64
		counted := func(c levee.Call[string]) levee.Call[string] {
			return func(ctx context.Context) (string, error) { invoked.Add(1); return c(ctx) }
		}
		start := time.Now()
		v, _, err := async.FirstSuccess(context.Background(), nil, []levee.Call[string]{
			counted(after(10*time.Millisecond, "", errBoom)),
			counted(after(10*time.Millisecond, "second", nil)),
			counted(value("third")),
		}, async.MaxConcurrency(1))
		require.NoError(t, err)
		assert.Equal(t, "second", v)
		assert.Equal(t, 20*time.Millisecond, time.Since(start))
		assert.Equal(t, int64(2), invoked.Load())
	})
}

func TestFirstSuccessParentCancellation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		slow := newBlocker(1, nil)
		_, _, err := async.FirstSuccess(ctx, nil, []levee.Call[int]{slow.call, slow.call})
		assert.Equal(t, context.DeadlineExceeded, err)
		assert.Equal(t, int64(2), slow.returned.Load())
	})
}

// A failure that only the caller's cancellation caused is not a failure of the calls: with
// FailFast set, FirstSuccess still reports the caller's cancellation.
func TestFirstSuccessReportsTheCallersCancellationNotTheCallsReaction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		slow := newBlocker(1, nil)
		go func() {
			slow.awaitStart(t, 1)
			cancel()
		}()
		_, _, err := async.FirstSuccess(ctx, nil, []levee.Call[int]{slow.call})
		assert.Same(t, context.Canceled, err)
	})
}

func TestFirstSuccessOfNoCalls(t *testing.T) {
	_, _, err := async.FirstSuccess[int](context.Background(), nil, nil)
	assert.Same(t, async.ErrNoCalls, err)
}
