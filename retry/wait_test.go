package retry_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/retry"
)

// TestArticleScenario2AttemptTimes is scenario 2 of the payment-service article: 3 attempts with exponential backoff
// 100ms ×2 happen at 0, 100 and 300ms, and the call fails right after the third.
func TestArticleScenario2AttemptTimes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		backoff, err := retry.ExponentialBackoff(100*ms, 2, 0)
		require.NoError(t, err)
		r := newRetry(t, retry.Config{MaxAttempts: 3, IntervalFunction: backoff, RetryErrors: []error{errGateway}})
		start := time.Now()
		var at []time.Duration
		_, err = retry.Execute(context.Background(), r, func(context.Context) (string, error) {
			at = append(at, time.Since(start))
			return "", errGateway
		})
		require.ErrorIs(t, err, errGateway)
		assert.Equal(t, []time.Duration{0, 100 * ms, 300 * ms}, at)
		assert.Equal(t, 300*ms, time.Since(start), "no wait after the final attempt")
	})
}

func TestNeverSleepsAfterFinalAttempt(t *testing.T) {
	for _, maxAttempts := range []int{1, 2, 5} {
		synctest.Test(t, func(t *testing.T) {
			asked := 0
			r := newRetry(t, retry.Config{MaxAttempts: maxAttempts, IntervalFunction: func(int) time.Duration {
				asked++
				return time.Hour
			}})
			start := time.Now()
			_, err := retry.Execute(context.Background(), r, newScript(fail(errGateway)).call)
			require.ErrorIs(t, err, retry.ErrMaxRetriesExceeded)
			assert.Equal(t, time.Duration(maxAttempts-1)*time.Hour, time.Since(start))
			assert.Equal(t, maxAttempts-1, asked)
		})
	}
}

func TestNeverSleepsAfterFinalResultAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: time.Minute, RetryOnResultPredicate: isPending})
		start := time.Now()
		v, err := retry.Execute(context.Background(), r, newScript(ok("PENDING")).call)
		require.NoError(t, err)
		assert.Equal(t, "PENDING", v)
		assert.Equal(t, 2*time.Minute, time.Since(start))
	})
}

func TestCancelDuringWaitEndsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: 10 * time.Second})
		rec := record(t, r)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			time.Sleep(time.Second)
			cancel()
		}()
		s := newScript(fail(errGateway))
		start := time.Now()
		_, err := retry.Execute(ctx, r, s.call)

		assert.Equal(t, time.Second, time.Since(start), "the wait ends at the cancellation")
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorIs(t, err, errGateway)
		assert.NotErrorIs(t, err, retry.ErrMaxRetriesExceeded)
		assert.EqualError(t, err, "retry: Retry 'test' stopped waiting for attempt 2: context canceled; last error: gateway 503")
		assert.Equal(t, 1, s.count(), "no attempt after the cancellation")
		assert.Equal(t, metrics(0, 0, 0, 0, 1), r.Metrics(), "a cancelled call is counted in no outcome")
		assert.Equal(t, []ev{{retry.EventRetry, 1, errGateway, 10 * time.Second}}, events(rec))
	})
}

// With IgnoreCallerDeadline the wait runs into the deadline, which interrupts it.
func TestDeadlineDuringWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetry(t, retry.Config{MaxAttempts: 10, WaitDuration: time.Second, IgnoreCallerDeadline: true})
		ctx, cancel := context.WithTimeout(context.Background(), 2500*ms)
		defer cancel()
		s := newScript(fail(errGateway))
		start := time.Now()
		_, err := retry.Execute(ctx, r, s.call)
		assert.Equal(t, 2500*ms, time.Since(start))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.ErrorIs(t, err, errGateway)
		assert.Equal(t, 3, s.count()) // at 0, 1s and 2s
	})
}

func TestCancelCauseIsKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shutdown := errors.New("shutting down")
		r := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: time.Second})
		ctx, cancel := context.WithCancelCause(context.Background())
		go func() {
			time.Sleep(ms)
			cancel(shutdown)
		}()
		_, err := retry.Execute(ctx, r, newScript(fail(errGateway)).call)
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorIs(t, err, shutdown)
		require.ErrorIs(t, err, errGateway)
	})
}

func TestCancelDuringResultWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: time.Second, RetryOnResultPredicate: isPending,
			IgnoreCallerDeadline: true})
		ctx, cancel := context.WithTimeout(context.Background(), 500*ms)
		defer cancel()
		s := newScript(ok("PENDING"))
		v, err := retry.Execute(ctx, r, s.call)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, "PENDING", v)
		assert.Equal(t, 1, s.count())
		assert.Equal(t, metrics(0, 0, 0, 0, 1), r.Metrics())
	})
}

func TestCancelledContextStopsEvenWithoutWait(t *testing.T) {
	r := newRetry(t, noWait(5))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := newScript(fail(errGateway)) // would ignore ctx and fail with its own error
	_, err := retry.Execute(ctx, r, s.call)
	assert.Equal(t, context.Canceled, err, "the caller's cancellation, unchanged")
	assert.Equal(t, 0, s.count(), "no attempt starts once the caller has given up")
}

func TestCallerCancellationIsNotRetried(t *testing.T) {
	r := newRetry(t, noWait(5))
	rec := record(t, r)
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	_, err := retry.Execute(ctx, r, func(ctx context.Context) (int, error) {
		calls++
		cancel()
		return 0, ctx.Err()
	})
	assert.Same(t, context.Canceled, err, "returned at once and unchanged")
	assert.Equal(t, 1, calls)
	assert.Equal(t, retry.Metrics{}, r.Metrics(), "released, not recorded")
	assert.Empty(t, rec.all())
}

func TestCallerCancellationAfterRetriesIsNotCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetry(t, retry.Config{MaxAttempts: 5, WaitDuration: 10 * ms})
		ctx, cancel := context.WithCancel(context.Background())
		calls := 0
		_, err := retry.Execute(ctx, r, func(ctx context.Context) (int, error) {
			calls++
			if calls == 2 {
				cancel()
				return 0, ctx.Err()
			}
			return 0, errGateway
		})
		assert.Same(t, context.Canceled, err)
		assert.Equal(t, 2, calls)
		assert.Equal(t, metrics(0, 0, 0, 0, 1), r.Metrics())
	})
}

func TestOtherContextsDeadlineIsRetried(t *testing.T) {
	// A deadline of the attempt's own (a per-attempt timeout, say) is not the caller's
	// cancellation: it is an ordinary, retryable failure.
	r := newRetry(t, noWait(3))
	s := newScript(fail(context.DeadlineExceeded), ok("PAID"))
	v, err := retry.Execute(context.Background(), r, s.call)
	require.NoError(t, err)
	assert.Equal(t, "PAID", v)
	assert.Equal(t, 2, s.count())
}
