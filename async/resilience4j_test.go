package async_test

// Tests named after Resilience4j's rules that concern futures: the breaker decorators of
// CompletionStage and Future, the ThreadPoolBulkhead and the TimeLimiter with futures. Other
// tests of those rules live next to the feature they test: TestFutureCancellationReleasesPermits,
// TestTimeLimiterCancelsTheRunningFuture, TestThreadPoolBulkheadAdmissionFollowsThreadPoolExecutor,
// TestPoolEventsFollowResilience4jTiming and TestCompletableFutureThrowWhileBuildingReachesTheFallback.

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/circuitbreaker"
)

// Item 7: in Resilience4j an Error (Go: a panic) is neither recorded nor released, so a
// HALF_OPEN probe that panics leaks its permit and the breaker never decides. levee records the
// panic of a future as a failure: the single probe's failure reopens the breaker, and the
// bulkhead's permit is back.
func TestPitfall7_PanicInAFutureIsRecordedAndReleasesItsPermits(t *testing.T) {
	cb := newBreaker(t, circuitbreaker.Config{
		PermittedNumberOfCallsInHalfOpenState: 1, InitialState: circuitbreaker.HalfOpen,
	})
	bh := newBulkhead(t, 1)
	p := levee.Compose[int]().WithBulkhead(bh).WithCircuitBreaker(cb)
	_, err := async.Go(context.Background(), p, func(context.Context) (int, error) { panic("probe") }).
		Get(context.Background())
	var pe *levee.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, circuitbreaker.Open, cb.State(), "the probe's failure decided")
	assert.Equal(t, 1, cb.Metrics().NumberOfFailedCalls)
	assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)
}

// CompletionStage decorator: a rejection is a failed future, never a synchronous throw,
// and the call is not invoked.
func TestCompletionStageRejectionIsAFailedFuture(t *testing.T) {
	cb := newBreaker(t, circuitbreaker.Config{InitialState: circuitbreaker.Open})
	invoked := false
	f := async.Go(context.Background(), levee.Compose[int]().WithCircuitBreaker(cb),
		func(context.Context) (int, error) { invoked = true; return 1, nil })
	_, err := f.Get(context.Background())
	assert.ErrorIs(t, err, circuitbreaker.ErrCallNotPermitted)
	assert.False(t, invoked)
	assert.Equal(t, 1, cb.Metrics().NumberOfNotPermittedCalls)
}

// a task's error fails its future. Resilience4j wraps it once in a CompletionException;
// levee returns it unchanged.
func TestThreadPoolBulkheadTaskErrorFailsTheFutureUnwrapped(t *testing.T) {
	pool := newPool(t, async.WorkerPoolConfig{CoreThreadPoolSize: 1, MaxThreadPoolSize: 1})
	f, err := async.Submit(context.Background(), pool, nil, failing[int](errBoom))
	require.NoError(t, err)
	_, err = f.Get(context.Background())
	assert.Same(t, errBoom, err)
}
