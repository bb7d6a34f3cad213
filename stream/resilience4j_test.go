package stream_test

// The rules of Resilience4j's reactive operators that reimplementations most often get
// wrong (item 11 of the reference's list), one test each.

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/stream"
)

// Flux CB records success only at completion: no per-element outcome while the stream runs.
func TestFluxBreakerRecordsSuccessOnlyAtCompletion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb := newBreaker(t, breakerConfig())
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		finish := make(chan struct{})
		items, err := stream.Subscribe(ctx, levee.Patterns{CircuitBreaker: cb}, stream.Source[int](func(ctx context.Context, emit func(int) error) error {
			if err := numbers(nil, 0, 3, nil)(ctx, emit); err != nil {
				return err
			}
			<-finish
			return nil
		}))
		require.NoError(t, err)
		for range 3 {
			<-items
			synctest.Wait()
			assert.Zero(t, cb.Metrics().NumberOfBufferedCalls)
		}
		close(finish)
		_, open := <-items
		assert.False(t, open)
		assert.Equal(t, 1, cb.Metrics().NumberOfSuccessfulCalls)
		assert.Equal(t, 1, cb.Metrics().NumberOfBufferedCalls)
	})
}

// ... or on cancel after items: a consumer that cancels after an element records a success;
// before any, the permission is released unrecorded.
func TestFluxBreakerRecordsSuccessOnCancelAfterItems(t *testing.T) {
	for _, emitted := range []int{0, 1, 2} {
		synctest.Test(t, func(t *testing.T) {
			cb := newBreaker(t, breakerConfig())
			ctx, cancel := context.WithCancel(context.Background())
			items, err := stream.Subscribe(ctx, levee.Patterns{CircuitBreaker: cb}, stream.Source[int](func(ctx context.Context, emit func(int) error) error {
				for i := range emitted {
					if err := emit(i); err != nil {
						return err
					}
				}
				<-ctx.Done()
				return ctx.Err()
			}))
			require.NoError(t, err)
			for range emitted {
				<-items
			}
			synctest.Wait()
			cancel()
			drain(items)
			m := cb.Metrics()
			if emitted == 0 {
				assert.Zero(t, m.NumberOfBufferedCalls)
			} else {
				assert.Equal(t, 1, m.NumberOfSuccessfulCalls)
			}
			assert.Zero(t, m.NumberOfFailedCalls)
		})
	}
}

// Reactor's Mono bulkhead releases at the first (only) item, not when the consumer takes it.
// The per-element call of Map is the Mono of this package: its permit is free while its
// result waits for the consumer.
func TestMonoBulkheadReleasesAtFirstItem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bh := newBulkhead(t, 1)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		out, err := stream.Map(ctx, feed(ctx, 1), levee.Compose[int]().WithBulkhead(bh),
			func(_ context.Context, v int) (int, error) { return v, nil })
		require.NoError(t, err)
		synctest.Wait() // the result waits to be sent
		assert.Equal(t, 1, available(bh))
		assert.Len(t, drain(out), 1)
	})
}

// A Flux bulkhead, by contrast, is held until the stream completes.
func TestFluxBulkheadReleasesAtCompletion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bh := newBulkhead(t, 1)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		finish := make(chan struct{})
		items, err := stream.Subscribe(ctx, levee.Patterns{Bulkhead: bh}, stream.Source[int](func(ctx context.Context, emit func(int) error) error {
			if err := numbers(nil, 0, 2, nil)(ctx, emit); err != nil {
				return err
			}
			<-finish
			return nil
		}))
		require.NoError(t, err)
		<-items
		<-items
		synctest.Wait()
		assert.Equal(t, 0, available(bh))
		close(finish)
		_, open := <-items
		assert.False(t, open)
		assert.Equal(t, 1, available(bh))
	})
}

// RateLimiter reserves once per subscription, however many elements the stream has.
func TestRateLimiterReservesOncePerSubscription(t *testing.T) {
	rl := newRateLimiter(t, ratelimiter.Config{LimitForPeriod: 5, LimitRefreshPeriod: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	items, err := stream.Subscribe(ctx, levee.Patterns{RateLimiter: rl}, numbers(nil, 0, 20, nil))
	require.NoError(t, err)
	assert.Len(t, drain(items), 20)
	assert.Equal(t, 4, rl.Metrics().AvailablePermissions)
}

// TimeLimiter on a Flux is per item: each element within the timeout of the one before, not a
// deadline on the whole stream.
func TestTimeLimiterOnFluxIsPerItem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTimeLimiter(t, timelimiterConfig(time.Second))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		gaps := make([]time.Duration, 10)
		for i := range gaps {
			gaps[i] = 900 * time.Millisecond
		}
		start := time.Now()
		items, err := stream.Subscribe(ctx, levee.Patterns{TimeLimiter: tl}, paced(gaps, nil))
		require.NoError(t, err)
		all := drain(items)
		assert.Len(t, all, 10)
		for _, it := range all {
			assert.NoError(t, it.Err)
		}
		assert.Equal(t, 9*time.Second, time.Since(start))
		assert.Equal(t, int64(1), tl.Metrics().NumberOfSuccessfulCalls)
		assert.Zero(t, tl.Metrics().NumberOfTimedOutCalls)
	})
}
