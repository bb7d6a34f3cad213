package stream_test

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
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/stream"
)

func TestSubscribeBreakerRejectionNeverBuildsTheSource(t *testing.T) {
	cb := newBreaker(t, breakerConfig())
	require.NoError(t, cb.TransitionToOpenState())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var builds atomic.Int64
	items, err := stream.Subscribe(ctx, levee.Patterns{CircuitBreaker: cb}, numbers(&builds, 0, 3, nil))
	require.NoError(t, err)
	all := drain(items)
	require.Len(t, all, 1)
	assert.ErrorIs(t, all[0].Err, circuitbreaker.ErrCallNotPermitted)
	var cnp *circuitbreaker.CallNotPermittedError
	require.ErrorAs(t, all[0].Err, &cnp)
	assert.Equal(t, circuitbreaker.Open, cnp.State)
	assert.Zero(t, builds.Load())
	assert.Equal(t, 1, cb.Metrics().NumberOfNotPermittedCalls)
}

func TestSubscribeBreakerRecordsFailureWhenTheStreamFails(t *testing.T) {
	cb := newBreaker(t, breakerConfig())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	items, err := stream.Subscribe(ctx, levee.Patterns{CircuitBreaker: cb}, numbers(nil, 0, 5, errBoom))
	require.NoError(t, err)
	assert.Len(t, drain(items), 6)
	m := cb.Metrics()
	assert.Equal(t, 1, m.NumberOfFailedCalls)
	assert.Equal(t, 0, m.NumberOfSuccessfulCalls)
}

// The breaker measures the whole stream: a stream longer than SlowCallDurationThreshold is a
// slow call, however quick each element.
func TestSubscribeBreakerTimesTheWholeStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := breakerConfig()
		cfg.SlowCallDurationThreshold = time.Second
		cb := newBreaker(t, cfg)
		var durations []time.Duration
		cb.Subscribe(func(e circuitbreaker.Event) {
			if e.Type == circuitbreaker.EventSuccess {
				durations = append(durations, e.Duration)
			}
		})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		items, err := stream.Subscribe(ctx, levee.Patterns{CircuitBreaker: cb}, stream.Source[int](func(_ context.Context, emit func(int) error) error {
			for i := range 3 {
				time.Sleep(600 * time.Millisecond)
				if err := emit(i); err != nil {
					return err
				}
			}
			return nil
		}))
		require.NoError(t, err)
		assert.Len(t, drain(items), 3)
		assert.Equal(t, []time.Duration{1800 * time.Millisecond}, durations)
		assert.Equal(t, 1, cb.Metrics().NumberOfSlowSuccessfulCalls)
	})
}

// In HALF_OPEN every permit counts: a subscription cancelled before its first element gives
// its probe permit back unrecorded; one cancelled after an element is a successful probe.
func TestSubscribeBreakerCancellation(t *testing.T) {
	for _, tc := range []struct {
		name                string
		emitted             int
		wantSuccess         int
		wantPermitAvailable bool
	}{
		{"before the first element", 0, 0, true},
		{"after an element", 1, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cb := newBreaker(t, circuitbreaker.Config{PermittedNumberOfCallsInHalfOpenState: 2, MinimumNumberOfCalls: 2, WaitDurationInOpenState: time.Second})
				require.NoError(t, cb.TransitionToOpenState())
				require.NoError(t, cb.TransitionToHalfOpenState())
				// One probe permit is held elsewhere, so the subscription takes the last one.
				require.NoError(t, tryAcquire(cb))
				ctx, cancel := context.WithCancel(context.Background())
				items, err := stream.Subscribe(ctx, levee.Patterns{CircuitBreaker: cb}, stream.Source[int](func(ctx context.Context, emit func(int) error) error {
					for i := range tc.emitted {
						if err := emit(i); err != nil {
							return err
						}
					}
					<-ctx.Done()
					return ctx.Err()
				}), stream.Buffer(1))
				require.NoError(t, err)
				synctest.Wait()
				assert.Error(t, tryAcquire(cb), "the subscription holds the last permit")
				cancel()
				drain(items)
				m := cb.Metrics()
				assert.Equal(t, tc.wantSuccess, m.NumberOfSuccessfulCalls)
				assert.Equal(t, 0, m.NumberOfFailedCalls)
				assert.Equal(t, circuitbreaker.HalfOpen, cb.State())
				assert.Equal(t, tc.wantPermitAvailable, tryAcquire(cb) == nil)
			})
		})
	}
}

// The bulkhead permit is held for the stream's whole life, between elements too, and given
// back exactly once.
func TestSubscribeBulkheadHeldForTheStreamsLife(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bh := newBulkhead(t, 1)
		var permitted, finished atomic.Int64
		bh.Subscribe(func(e bulkhead.Event) {
			switch e.Type {
			case bulkhead.EventCallPermitted:
				permitted.Add(1)
			case bulkhead.EventCallFinished:
				finished.Add(1)
			}
		})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		items, err := stream.Subscribe(ctx, levee.Patterns{Bulkhead: bh}, stream.Source[int](func(_ context.Context, emit func(int) error) error {
			for i := range 3 {
				time.Sleep(time.Second)
				if err := emit(i); err != nil {
					return err
				}
			}
			return nil
		}))
		require.NoError(t, err)
		<-items
		assert.Equal(t, 0, available(bh))
		// A second subscription is refused while the first one streams.
		second, err := stream.Subscribe(ctx, levee.Patterns{Bulkhead: bh}, numbers(nil, 0, 1, nil))
		require.NoError(t, err)
		refused := drain(second)
		require.Len(t, refused, 1)
		assert.ErrorIs(t, refused[0].Err, bulkhead.ErrBulkheadFull)
		assert.Len(t, drain(items), 2)
		assert.Equal(t, 1, available(bh))
		assert.Equal(t, int64(1), permitted.Load())
		assert.Equal(t, int64(1), finished.Load())
	})
}

func TestSubscribeBulkheadCancelledBeforeAnElementReleasesWithoutFinishing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bh := newBulkhead(t, 1)
		var finished atomic.Int64
		bh.Subscribe(func(e bulkhead.Event) {
			if e.Type == bulkhead.EventCallFinished {
				finished.Add(1)
			}
		})
		ctx, cancel := context.WithCancel(context.Background())
		items, err := stream.Subscribe(ctx, levee.Patterns{Bulkhead: bh}, stream.Source[int](func(ctx context.Context, _ func(int) error) error {
			<-ctx.Done()
			return ctx.Err()
		}))
		require.NoError(t, err)
		synctest.Wait()
		assert.Equal(t, 0, available(bh))
		cancel()
		assert.Empty(t, drain(items))
		assert.Equal(t, 1, available(bh))
		assert.Zero(t, finished.Load())
	})
}

// A full bulkhead's rejection is not recorded by the breaker, nor retried.
func TestSubscribeBulkheadRejectionIsIgnoredByBreakerAndRetry(t *testing.T) {
	bh := newBulkhead(t, 1)
	require.True(t, bh.TryAcquire())
	defer bh.Release()
	cb := newBreaker(t, breakerConfig())
	rt := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var builds atomic.Int64
	items, err := stream.Subscribe(ctx, levee.Patterns{Retry: rt, CircuitBreaker: cb, Bulkhead: bh}, numbers(&builds, 0, 1, nil))
	require.NoError(t, err)
	all := drain(items)
	require.Len(t, all, 1)
	assert.ErrorIs(t, all[0].Err, bulkhead.ErrBulkheadFull)
	assert.Zero(t, builds.Load())
	assert.Zero(t, cb.Metrics().NumberOfBufferedCalls)
	assert.Equal(t, int64(1), rt.Metrics().NumberOfFailedCallsWithoutRetryAttempt)
	assert.Equal(t, int64(1), rt.Metrics().NumberOfTotalCalls)
}

func TestSubscribeRetryRestartsTheStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: time.Second})
		cb := newBreaker(t, breakerConfig())
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var builds atomic.Int64
		start := time.Now()
		var startedAt []time.Duration
		items, err := stream.Subscribe(ctx, levee.Patterns{Retry: rt, CircuitBreaker: cb}, stream.Source[int](func(_ context.Context, emit func(int) error) error {
			n := builds.Add(1)
			startedAt = append(startedAt, time.Since(start))
			for i := range 2 {
				if err := emit(10*int(n) + i); err != nil {
					return err
				}
			}
			if n < 3 {
				return errBoom
			}
			return nil
		}))
		require.NoError(t, err)
		assert.Equal(t, []stream.Item[int]{
			{Value: 10, Attempt: 1}, {Value: 11, Attempt: 1},
			{Value: 20, Attempt: 2}, {Value: 21, Attempt: 2},
			{Value: 30, Attempt: 3}, {Value: 31, Attempt: 3},
		}, drain(items))
		assert.Equal(t, []time.Duration{0, time.Second, 2 * time.Second}, startedAt)
		m := rt.Metrics()
		assert.Equal(t, int64(1), m.NumberOfSuccessfulCallsWithRetryAttempt)
		assert.Equal(t, int64(3), m.NumberOfTotalCalls)
		assert.Equal(t, 2, cb.Metrics().NumberOfFailedCalls, "one breaker decision per attempt")
		assert.Equal(t, 1, cb.Metrics().NumberOfSuccessfulCalls)
	})
}

func TestSubscribeRetryExhausted(t *testing.T) {
	rt := newRetry(t, retry.Config{MaxAttempts: 2, WaitDuration: retry.NoWait})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var builds atomic.Int64
	items, err := stream.Subscribe(ctx, levee.Patterns{Retry: rt}, numbers(&builds, 0, 1, errBoom))
	require.NoError(t, err)
	all := drain(items)
	require.Len(t, all, 3)
	assert.Equal(t, []int{0, 0}, itemValues(all))
	assert.ErrorIs(t, all[2].Err, retry.ErrMaxRetriesExceeded)
	assert.ErrorIs(t, all[2].Err, errBoom)
	assert.Equal(t, int64(2), builds.Load())
	assert.Equal(t, int64(1), rt.Metrics().NumberOfFailedCallsWithRetryAttempt)
}

// RetryOnResultPredicate sees each element before delivery: a match with attempts left is
// not delivered and starts the stream over; on the last attempt it is delivered, and the
// call ends as a failure at completion (with FailAfterMaxAttempts, with an error).
func TestSubscribeRetryOnResultPerElement(t *testing.T) {
	for _, failAfter := range []bool{false, true} {
		t.Run(map[bool]string{false: "last result delivered", true: "FailAfterMaxAttempts"}[failAfter], func(t *testing.T) {
			rt := newRetry(t, retry.Config{
				MaxAttempts: 2, WaitDuration: retry.NoWait, FailAfterMaxAttempts: failAfter,
				RetryOnResultPredicate: func(v any) bool { return v.(int) < 0 },
			})
			cb := newBreaker(t, breakerConfig())
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var builds atomic.Int64
			items, err := stream.Subscribe(ctx, levee.Patterns{Retry: rt, CircuitBreaker: cb}, stream.Source[int](func(_ context.Context, emit func(int) error) error {
				builds.Add(1)
				for _, v := range []int{1, -1, 2} {
					if err := emit(v); err != nil {
						return err
					}
				}
				return nil
			}))
			require.NoError(t, err)
			all := drain(items)
			want := []stream.Item[int]{{Value: 1, Attempt: 1}, {Value: 1, Attempt: 2}, {Value: -1, Attempt: 2}, {Value: 2, Attempt: 2}}
			if failAfter {
				require.Len(t, all, 5)
				assert.Equal(t, want, all[:4])
				assert.ErrorIs(t, all[4].Err, retry.ErrMaxRetriesExceeded)
				var mre *retry.MaxRetriesExceededError
				require.ErrorAs(t, all[4].Err, &mre)
				assert.Equal(t, -1, mre.LastResult)
			} else {
				assert.Equal(t, want, all)
			}
			assert.Equal(t, int64(2), builds.Load())
			assert.Equal(t, int64(1), rt.Metrics().NumberOfFailedCallsWithRetryAttempt)
			assert.Equal(t, 2, cb.Metrics().NumberOfSuccessfulCalls, "both attempts produced elements")
		})
	}
}

// Retry does not retry a rejection by its own breaker; the fallback answers it.
func TestSubscribeOpenBreakerIsNotRetriedAndReachesTheFallback(t *testing.T) {
	cb := newBreaker(t, breakerConfig())
	require.NoError(t, cb.TransitionToForcedOpenState())
	rt := newRetry(t, retry.Config{MaxAttempts: 5, WaitDuration: retry.NoWait})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var builds atomic.Int64
	items, err := stream.Subscribe(ctx, levee.Patterns{Retry: rt, CircuitBreaker: cb},
		stream.Source[string](func(context.Context, func(string) error) error { builds.Add(1); return nil }),
		stream.WithFallbackSource(func(_ context.Context, cause error, emit func(string) error) error {
			if errors.Is(cause, circuitbreaker.ErrCallNotPermitted) {
				return emit("cached")
			}
			return cause
		}))
	require.NoError(t, err)
	assert.Equal(t, []stream.Item[string]{{Value: "cached", Fallback: true}}, drain(items))
	assert.Equal(t, int64(1), rt.Metrics().NumberOfTotalCalls)
	assert.Equal(t, int64(1), rt.Metrics().NumberOfFailedCallsWithoutRetryAttempt)
	assert.Zero(t, builds.Load())
}

// TestSubscribeLatePermitDoesNotEnlargeANewHalfOpenPeriod is the regression test for a
// subscription admitted while CLOSED that ends without telling anything about the dependency
// (cancelled before its first element, or failing with an ignored error) after the breaker
// entered a new HALF_OPEN period: its permission goes back to the CLOSED period that granted
// it, so the HALF_OPEN period still admits exactly its 1 probe, not 2.
func TestSubscribeLatePermitDoesNotEnlargeANewHalfOpenPeriod(t *testing.T) {
	errIgnored := errors.New("ignored by the breaker")
	for _, tc := range []struct {
		name string
		end  func(cancel context.CancelFunc, fail chan<- error)
	}{
		{"cancelled before its first element", func(cancel context.CancelFunc, _ chan<- error) { cancel() }},
		{"failing with an ignored error", func(_ context.CancelFunc, fail chan<- error) { fail <- errIgnored }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cb := newBreaker(t, circuitbreaker.Config{PermittedNumberOfCallsInHalfOpenState: 1,
					IgnoreErrors: []error{errIgnored}})
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				fail := make(chan error)
				items, err := stream.Subscribe(ctx, levee.Patterns{CircuitBreaker: cb}, stream.Source[int](func(ctx context.Context, _ func(int) error) error {
					select {
					case err := <-fail:
						return err
					case <-ctx.Done():
						return ctx.Err()
					}
				}))
				require.NoError(t, err)
				synctest.Wait() // admitted while CLOSED, waiting for the dependency
				require.NoError(t, cb.TransitionToOpenState())
				require.NoError(t, cb.TransitionToHalfOpenState())
				tc.end(cancel, fail)
				drain(items)
				assert.Equal(t, circuitbreaker.HalfOpen, cb.State())
				assert.Equal(t, 0, cb.Metrics().NumberOfBufferedCalls, "nothing recorded")
				require.NoError(t, tryAcquire(cb), "the period's one probe")
				assert.ErrorIs(t, tryAcquire(cb), circuitbreaker.ErrCallNotPermitted, "and no second one")
			})
		})
	}
}
