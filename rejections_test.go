package levee_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
)

// errBadRequest is the caller's fault: the natural Go predicate retries or records everything
// else, and levee's own rejections must not fall into that "everything else".
var errBadRequest = errors.New("400 bad request")

func allButBadRequests(err error) bool { return !errors.Is(err, errBadRequest) }

// Retry(CircuitBreaker) with the breaker OPEN and a retry predicate "everything except a bad
// request": the breaker's rejection is not retried. One attempt reaches the breaker, none the
// dependency, and no time passes waiting for retries the breaker would refuse anyway.
func TestRetryPredicateDoesNotRetryAnOpenBreakersRejection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb, err := circuitbreaker.New("payment", circuitbreaker.Config{SlidingWindowSize: 10, MinimumNumberOfCalls: 5})
		require.NoError(t, err)
		require.NoError(t, cb.TransitionToOpenState())
		rt, err := retry.New("payment", retry.Config{
			MaxAttempts: 3, WaitDuration: 50 * time.Millisecond,
			RetryOnErrorPredicate: allButBadRequests,
		})
		require.NoError(t, err)
		pay := levee.Compose[string]().WithCircuitBreaker(cb).WithRetry(rt)

		var calls atomic.Int64
		start := time.Now()
		_, err = pay.Execute(context.Background(), func(context.Context) (string, error) {
			calls.Add(1)
			return "PAID", nil
		})
		require.ErrorIs(t, err, circuitbreaker.ErrCallNotPermitted)
		assert.True(t, levee.IsRejection(err))
		assert.Equal(t, time.Duration(0), time.Since(start), "no wait for a retry")
		assert.Equal(t, int64(0), calls.Load())
		assert.Equal(t, 1, cb.Metrics().NumberOfNotPermittedCalls, "exactly one attempt reached the breaker")
		assert.Equal(t, retry.Metrics{NumberOfFailedCallsWithoutRetryAttempt: 1, NumberOfTotalCalls: 1}, rt.Metrics())
	})
}

// The breaker-in-front-of-a-bulkhead scenario: DefaultPipeline puts the breaker outside a
// 2-permit bulkhead that does not wait, and the breaker's record predicate is "everything
// except a bad request". Ten concurrent calls to a healthy dependency: two hold the bulkhead,
// eight are refused by it, and the breaker, which saw no failure of the dependency, stays
// CLOSED with nothing failed.
func TestRecordPredicateDoesNotRecordAFullBulkhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb, err := circuitbreaker.New("payment", circuitbreaker.Config{
			SlidingWindowSize: 10, MinimumNumberOfCalls: 5,
			RecordErrorPredicate: allButBadRequests,
		})
		require.NoError(t, err)
		bh, err := bulkhead.New("payment", bulkhead.Config{MaxConcurrentCalls: 2})
		require.NoError(t, err)
		pay := levee.DefaultPipeline[string](levee.Patterns{CircuitBreaker: cb, Bulkhead: bh}, nil)

		release := make(chan struct{}) // the barrier: the two admitted calls wait on it
		var entered atomic.Int64
		healthy := func(ctx context.Context) (string, error) {
			entered.Add(1)
			<-release
			return "PAID", nil
		}
		errs := make([]error, 10)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() { _, errs[i] = pay.Execute(context.Background(), healthy) })
		}
		synctest.Wait() // every call is either in the dependency or already refused
		assert.Equal(t, int64(2), entered.Load(), "exactly two calls hold the bulkhead")
		close(release)
		wg.Wait()

		ok, full := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, bulkhead.ErrBulkheadFull):
				full++
			default:
				t.Errorf("unexpected error: %v", err)
			}
		}
		assert.Equal(t, 2, ok)
		assert.Equal(t, 8, full)
		m := cb.Metrics()
		assert.Equal(t, circuitbreaker.Closed, cb.State())
		assert.Equal(t, 0, m.NumberOfFailedCalls)
		assert.Equal(t, 2, m.NumberOfSuccessfulCalls)
		assert.Equal(t, 0, m.NumberOfNotPermittedCalls)
		assert.Equal(t, 2, bh.Metrics().AvailableConcurrentCalls)
	})
}

// The same Retry(CircuitBreaker) with the breaker's rejection listed in RetryRejections: one
// line brings back Resilience4j's behaviour, where a retry retries CallNotPermittedException.
// Three attempts reach the open breaker, two waits of 50 ms pass, and the retry ends exhausted.
func TestRetryRejectionsRetriesAnOpenBreakersRejection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb, err := circuitbreaker.New("payment", circuitbreaker.Config{SlidingWindowSize: 10, MinimumNumberOfCalls: 5})
		require.NoError(t, err)
		require.NoError(t, cb.TransitionToOpenState())
		rt, err := retry.New("payment", retry.Config{
			MaxAttempts: 3, WaitDuration: 50 * time.Millisecond,
			RetryOnErrorPredicate: allButBadRequests,
			RetryRejections:       []error{circuitbreaker.ErrCallNotPermitted},
		})
		require.NoError(t, err)
		pay := levee.Compose[string]().WithCircuitBreaker(cb).WithRetry(rt)

		start := time.Now()
		_, err = pay.Execute(context.Background(), func(context.Context) (string, error) { return "PAID", nil })
		require.ErrorIs(t, err, circuitbreaker.ErrCallNotPermitted)
		require.ErrorIs(t, err, retry.ErrMaxRetriesExceeded)
		assert.Equal(t, 100*time.Millisecond, time.Since(start))
		assert.Equal(t, 3, cb.Metrics().NumberOfNotPermittedCalls)
		assert.Equal(t, retry.Metrics{NumberOfFailedCallsWithRetryAttempt: 1, NumberOfTotalCalls: 3}, rt.Metrics(), "three attempts in all")
	})
}

// The bulkhead scenario with the bulkhead's rejection listed in RecordRejections: one line
// brings back Resilience4j's behaviour, where the breaker counts BulkheadFullException as a
// failure. Two calls hold the bulkhead; eight more come one after another: the first five are
// refused by the bulkhead and recorded as failures, which opens the breaker (minimum 5 calls,
// 100 % failed), and the breaker refuses the last three itself.
func TestRecordRejectionsRecordsAFullBulkhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb, err := circuitbreaker.New("payment", circuitbreaker.Config{
			SlidingWindowSize: 10, MinimumNumberOfCalls: 5,
			RecordErrorPredicate: allButBadRequests,
			RecordRejections:     []error{bulkhead.ErrBulkheadFull},
		})
		require.NoError(t, err)
		bh, err := bulkhead.New("payment", bulkhead.Config{MaxConcurrentCalls: 2})
		require.NoError(t, err)
		pay := levee.DefaultPipeline[string](levee.Patterns{CircuitBreaker: cb, Bulkhead: bh}, nil)

		release := make(chan struct{})
		healthy := func(ctx context.Context) (string, error) {
			<-release
			return "PAID", nil
		}
		held := make([]error, 2)
		var wg sync.WaitGroup
		for i := range held {
			wg.Go(func() { _, held[i] = pay.Execute(context.Background(), healthy) })
		}
		synctest.Wait() // both hold the bulkhead
		full, notPermitted := 0, 0
		for range 8 {
			_, err := pay.Execute(context.Background(), healthy)
			switch {
			case errors.Is(err, bulkhead.ErrBulkheadFull):
				full++
			case errors.Is(err, circuitbreaker.ErrCallNotPermitted):
				notPermitted++
			default:
				t.Errorf("unexpected error: %v", err)
			}
		}
		assert.Equal(t, 5, full)
		assert.Equal(t, 3, notPermitted)
		assert.Equal(t, circuitbreaker.Open, cb.State())
		close(release)
		wg.Wait()
		assert.Equal(t, []error{nil, nil}, held)
		m := cb.Metrics()
		assert.Equal(t, 5, m.NumberOfFailedCalls)
		assert.Equal(t, 3, m.NumberOfNotPermittedCalls)
	})
}

// levee.AllRejections is Resilience4j's default in one list: a retry with it retries the
// refusals of a breaker, a bulkhead and a rate limiter alike, three attempts each.
func TestAllRejectionsRetriesEveryKindOfRejection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb, err := circuitbreaker.New("payment", circuitbreaker.Config{InitialState: circuitbreaker.ForcedOpen})
		require.NoError(t, err)
		bh, err := bulkhead.New("payment", bulkhead.Config{MaxConcurrentCalls: bulkhead.NoConcurrentCalls})
		require.NoError(t, err)
		rl, err := ratelimiter.New("payment", ratelimiter.Config{
			LimitForPeriod: 1, LimitRefreshPeriod: time.Hour, TimeoutDuration: ratelimiter.NoWait,
		})
		require.NoError(t, err)
		require.NoError(t, rl.AcquirePermission(context.Background(), 1)) // the hour's only permission
		for _, tc := range []struct {
			name     string
			pipeline func(*retry.Retry) *levee.Pipeline[string]
			want     error
		}{
			{"breaker", func(rt *retry.Retry) *levee.Pipeline[string] {
				return levee.Compose[string]().WithCircuitBreaker(cb).WithRetry(rt)
			}, circuitbreaker.ErrCallNotPermitted},
			{"bulkhead", func(rt *retry.Retry) *levee.Pipeline[string] {
				return levee.Compose[string]().WithBulkhead(bh).WithRetry(rt)
			}, bulkhead.ErrBulkheadFull},
			{"rate limiter", func(rt *retry.Retry) *levee.Pipeline[string] {
				return levee.Compose[string]().WithRateLimiter(rl).WithRetry(rt)
			}, ratelimiter.ErrRequestNotPermitted},
		} {
			rt, err := retry.New(tc.name, retry.Config{
				MaxAttempts: 3, WaitDuration: retry.NoWait,
				RetryRejections: levee.AllRejections(),
			})
			require.NoError(t, err)
			_, err = tc.pipeline(rt).Execute(context.Background(), func(context.Context) (string, error) { return "PAID", nil })
			require.ErrorIs(t, err, tc.want, tc.name)
			require.ErrorIs(t, err, retry.ErrMaxRetriesExceeded, tc.name)
			assert.Equal(t, retry.Metrics{NumberOfFailedCallsWithRetryAttempt: 1, NumberOfTotalCalls: 3}, rt.Metrics(), tc.name)
		}
	})
}

// A breaker with levee.AllRejections as RecordRejections records an inner rate limiter's
// refusals as failures, as Resilience4j's breaker records RequestNotPermitted.
func TestAllRejectionsRecordsEveryKindOfRejection(t *testing.T) {
	cb, err := circuitbreaker.New("payment", circuitbreaker.Config{
		SlidingWindowSize: 4, MinimumNumberOfCalls: 4,
		RecordRejections: levee.AllRejections(),
	})
	require.NoError(t, err)
	rl, err := ratelimiter.New("payment", ratelimiter.Config{
		LimitForPeriod: 1, LimitRefreshPeriod: time.Hour, TimeoutDuration: ratelimiter.NoWait,
	})
	require.NoError(t, err)
	pay := levee.DefaultPipeline[string](levee.Patterns{CircuitBreaker: cb, RateLimiter: rl}, nil)
	var errs []error
	for range 4 {
		_, err := pay.Execute(context.Background(), func(context.Context) (string, error) { return "PAID", nil })
		errs = append(errs, err)
	}
	assert.NoError(t, errs[0])
	for _, err := range errs[1:] {
		assert.ErrorIs(t, err, ratelimiter.ErrRequestNotPermitted)
	}
	m := cb.Metrics()
	assert.Equal(t, 3, m.NumberOfFailedCalls)
	assert.Equal(t, 1, m.NumberOfSuccessfulCalls)
	assert.Equal(t, float32(75), m.FailureRate)
	assert.Equal(t, circuitbreaker.Open, cb.State())
}

// AllRejections returns a fresh list each call: a config that appends to its list or changes
// it leaves every other config alone.
func TestAllRejectionsIsAFreshList(t *testing.T) {
	a, b := levee.AllRejections(), levee.AllRejections()
	require.Len(t, a, 1)
	assert.Equal(t, "levee: any rejection by a levee pattern", a[0].Error())
	a[0] = bulkhead.ErrBulkheadFull
	a = append(a, circuitbreaker.ErrCallNotPermitted)
	assert.Len(t, b, 1)
	assert.Equal(t, "levee: any rejection by a levee pattern", b[0].Error())
	assert.Equal(t, "levee: any rejection by a levee pattern", levee.AllRejections()[0].Error())
	assert.NotSame(t, &a[0], &b[0])
}

// The deprecated AnyRejection is the entry AllRejections holds, and still matches every
// rejection in either list.
func TestDeprecatedAnyRejectionStillMatchesEveryRejection(t *testing.T) {
	assert.Equal(t, levee.AllRejections(), []error{levee.AnyRejection()})
	rt, err := retry.New("payment", retry.Config{
		MaxAttempts: 2, WaitDuration: retry.NoWait, RetryRejections: []error{levee.AnyRejection()},
	})
	require.NoError(t, err)
	calls := 0
	_, err = retry.Execute(context.Background(), rt, func(context.Context) (string, error) {
		calls++
		return "", bulkhead.ErrBulkheadFull
	})
	require.ErrorIs(t, err, bulkhead.ErrBulkheadFull)
	assert.Equal(t, 2, calls)
	_, err = circuitbreaker.New("payment", circuitbreaker.Config{RecordRejections: []error{levee.AnyRejection()}})
	assert.NoError(t, err)
}
