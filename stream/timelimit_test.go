package stream_test

import (
	"context"
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
	"github.com/levee-go/levee/timelimiter"
)

// paced returns a Source that waits gaps[i] before emitting element i, honouring ctx, and
// reports when its context was cancelled on cancelledAt, if not nil. At a time limit the
// output ends without waiting for the source to return, hence the channel.
func paced(gaps []time.Duration, cancelledAt chan<- time.Duration) stream.Source[int] {
	return func(ctx context.Context, emit func(int) error) error {
		start := time.Now()
		defer func() {
			if ctx.Err() != nil && cancelledAt != nil {
				cancelledAt <- time.Since(start)
			}
		}()
		for i, g := range gaps {
			select {
			case <-time.After(g):
			case <-ctx.Done():
				return ctx.Err()
			}
			if err := emit(i); err != nil {
				return err
			}
		}
		return nil
	}
}

type timed struct {
	item stream.Item[int]
	at   time.Duration
}

func drainTimed(items <-chan stream.Item[int]) []timed {
	start := time.Now()
	var all []timed
	for it := range items {
		all = append(all, timed{it, time.Since(start)})
	}
	return all
}

func TestSubscribeTimeLimits(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name      string
		bound     stream.TimeBound // 0: the default
		gaps      []time.Duration
		wantItems int           // elements delivered before the end
		wantAt    time.Duration // when the timeout item came; 0: no timeout
	}{
		{"default: first element too late", 0, []time.Duration{1500 * ms}, 0, time.Second},
		{"default: a gap too long", 0, []time.Duration{900 * ms, 900 * ms, 1200 * ms}, 2, 2800 * ms},
		{"default: every element in time", 0, []time.Duration{900 * ms, 900 * ms, 900 * ms}, 3, 0},
		{"first element only", stream.BoundFirstElement, []time.Duration{900 * ms, 5000 * ms}, 2, 0},
		{"gap only", stream.BoundGap, []time.Duration{5000 * ms, 900 * ms, 1100 * ms}, 2, 6900 * ms},
		{"whole stream", stream.BoundStream, []time.Duration{400 * ms, 400 * ms, 400 * ms}, 2, time.Second},
		{"whole stream in time", stream.BoundStream, []time.Duration{300 * ms, 300 * ms, 300 * ms}, 3, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tl := newTimeLimiter(t, timelimiterConfig(time.Second))
				cb := newBreaker(t, breakerConfig())
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var opts []stream.Option
				if tc.bound != 0 {
					opts = append(opts, stream.TimeLimit(tc.bound))
				}
				cancelledAt := make(chan time.Duration, 1)
				items, err := stream.Subscribe(ctx, levee.Patterns{CircuitBreaker: cb, TimeLimiter: tl}, paced(tc.gaps, cancelledAt), opts...)
				require.NoError(t, err)
				all := drainTimed(items)
				if tc.wantAt == 0 {
					require.Len(t, all, tc.wantItems)
					assert.Equal(t, int64(1), tl.Metrics().NumberOfSuccessfulCalls)
					assert.Equal(t, 1, cb.Metrics().NumberOfSuccessfulCalls)
					return
				}
				require.Len(t, all, tc.wantItems+1)
				last := all[tc.wantItems]
				assert.Equal(t, tc.wantAt, last.at)
				assert.Equal(t, tc.wantAt, <-cancelledAt, "the source's context is cancelled at the limit")
				assert.ErrorIs(t, last.item.Err, timelimiter.ErrTimeout)
				assert.ErrorIs(t, last.item.Err, context.DeadlineExceeded)
				var te *timelimiter.TimeoutError
				require.ErrorAs(t, last.item.Err, &te)
				assert.Equal(t, "tl", te.Name)
				assert.Equal(t, time.Second, te.Timeout)
				assert.Equal(t, int64(1), tl.Metrics().NumberOfTimedOutCalls)
				assert.Equal(t, 1, cb.Metrics().NumberOfFailedCalls)
			})
		})
	}
}

// The first-element and gap bounds time the source, not the consumer: a consumer slower than
// the limit does not make the source time out.
func TestSubscribeTimeLimitIgnoresASlowConsumer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTimeLimiter(t, timelimiterConfig(time.Second))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		items, err := stream.Subscribe(ctx, levee.Patterns{TimeLimiter: tl}, paced([]time.Duration{500 * time.Millisecond, 500 * time.Millisecond, 500 * time.Millisecond}, nil))
		require.NoError(t, err)
		var got []int
		for it := range items {
			require.NoError(t, it.Err)
			got = append(got, it.Value)
			time.Sleep(5 * time.Second)
		}
		assert.Equal(t, []int{0, 1, 2}, got)
		assert.Zero(t, tl.Metrics().NumberOfTimedOutCalls)
	})
}

// At the limit the output ends at once even when the source ignores its context; the source
// keeps its bulkhead permit until it returns.
func TestSubscribeTimeLimitAbandonsASourceThatIgnoresItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTimeLimiter(t, timelimiterConfig(time.Second))
		bh := newBulkhead(t, 1)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		returned := make(chan time.Duration, 1)
		start := time.Now()
		items, err := stream.Subscribe(ctx, levee.Patterns{TimeLimiter: tl, Bulkhead: bh}, stream.Source[int](func(context.Context, func(int) error) error {
			time.Sleep(10 * time.Second) // ignores ctx
			returned <- time.Since(start)
			return nil
		}))
		require.NoError(t, err)
		first := <-items
		assert.ErrorIs(t, first.Err, timelimiter.ErrTimeout)
		assert.Equal(t, time.Second, time.Since(start), "the timeout comes at the limit")
		synctest.Wait()
		assert.Equal(t, 0, available(bh), "the abandoned source still runs")
		assert.Empty(t, drain(items))
		assert.Equal(t, 10*time.Second, time.Since(start), "the output closes once the source has returned")
		assert.Equal(t, 10*time.Second, <-returned)
		assert.Equal(t, 1, available(bh))
	})
}

// A timeout is an ordinary failure of the attempt: retry starts the stream over.
func TestSubscribeTimeoutIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTimeLimiter(t, timelimiterConfig(time.Second))
		rt := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var attempts atomic.Int64
		items, err := stream.Subscribe(ctx, levee.Patterns{Retry: rt, TimeLimiter: tl}, stream.Source[int](func(ctx context.Context, emit func(int) error) error {
			if attempts.Add(1) < 3 {
				<-ctx.Done()
				return ctx.Err()
			}
			return emit(7)
		}))
		require.NoError(t, err)
		start := time.Now()
		assert.Equal(t, []stream.Item[int]{{Value: 7, Attempt: 3}}, drain(items))
		assert.Equal(t, 2*time.Second, time.Since(start))
		assert.Equal(t, int64(2), tl.Metrics().NumberOfTimedOutCalls)
		assert.Equal(t, int64(1), tl.Metrics().NumberOfSuccessfulCalls)
	})
}

// The time limiter sits inside the breaker and outside the bulkhead, as in the default
// pipeline: waiting for a bulkhead permit counts towards the first element.
func TestSubscribeBulkheadWaitCountsTowardsTheFirstElement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTimeLimiter(t, timelimiterConfig(time.Second))
		bh, err := bulkhead.New("bh", bulkhead.Config{MaxConcurrentCalls: 1, MaxWaitDuration: time.Hour})
		require.NoError(t, err)
		cb := newBreaker(t, breakerConfig())
		require.True(t, bh.TryAcquire())
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		items, err := stream.Subscribe(ctx, levee.Patterns{CircuitBreaker: cb, TimeLimiter: tl, Bulkhead: bh}, numbers(nil, 0, 1, nil))
		require.NoError(t, err)
		all := drain(items)
		require.Len(t, all, 1)
		assert.ErrorIs(t, all[0].Err, timelimiter.ErrTimeout)
		synctest.Wait() // the attempt's goroutine leaves the bulkhead's queue on its own
		assert.Equal(t, 0, bh.Metrics().NumberOfWaitingCalls)
		bh.Release()
		assert.Equal(t, 1, available(bh))
		assert.Equal(t, 1, cb.Metrics().NumberOfFailedCalls)
		assert.Equal(t, circuitbreaker.Closed, cb.State())
	})
}

// panickyIsError is an error whose Is method panics, as a typed nil whose Is reads its
// receiver does.
type panickyIsError struct{}

func (panickyIsError) Error() string { return "panicky" }
func (panickyIsError) Is(error) bool { panic("Is of a broken error") }

// The time limiter classified the Source's error with errors.Is, running its Is method in
// the subscription's goroutine: one that panicked killed the process.
func TestSubscribeTimeLimiterSurvivesASourceErrorWhoseIsPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl, err := timelimiter.New("tl", timelimiter.Config{TimeoutDuration: time.Hour})
		require.NoError(t, err)
		out, err := stream.Subscribe(context.Background(), levee.Patterns{TimeLimiter: tl},
			func(ctx context.Context, emit func(int) error) error {
				if err := emit(1); err != nil {
					return err
				}
				return panickyIsError{}
			})
		require.NoError(t, err)
		items := drain(out)
		require.Len(t, items, 2)
		assert.Equal(t, 1, items[0].Value)
		assert.Equal(t, panickyIsError{}, items[1].Err)
		m := tl.Metrics()
		assert.Equal(t, int64(1), m.NumberOfFailedCalls)
		assert.Equal(t, int64(0), m.NumberOfTimedOutCalls)
	})
}

// A source that returned before its consumer cancelled is recorded as it returned: a success
// (nil) or a failure (an error), by the time limiter and the breaker alike, never dropped as a
// cancellation. The consumer cancels as soon as the source's context ends, which is once the
// source has returned.
func TestSubscribeSourceThatReturnedBeforeTheConsumerCancelledIsRecorded(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		tl     timelimiter.Metrics
		ok, ko int
	}{
		{"nil", nil, timelimiter.Metrics{NumberOfSuccessfulCalls: 200}, 200, 0},
		{"an error", errBoom, timelimiter.Metrics{NumberOfFailedCalls: 200}, 0, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tl := newTimeLimiter(t, timelimiterConfig(time.Second))
				cb := newBreaker(t, breakerConfig())
				for range 200 {
					ctx, cancel := context.WithCancel(context.Background())
					items, err := stream.Subscribe(ctx, levee.Patterns{CircuitBreaker: cb, TimeLimiter: tl},
						stream.Source[int](func(srcCtx context.Context, _ func(int) error) error {
							context.AfterFunc(srcCtx, cancel)
							return tc.err
						}))
					require.NoError(t, err)
					for range items {
					}
					synctest.Wait()
					require.Equal(t, context.Canceled, ctx.Err(), "the consumer cancelled")
				}
				assert.Equal(t, tc.tl, tl.Metrics())
				m := cb.Metrics()
				assert.Equal(t, tc.ok, m.NumberOfSuccessfulCalls)
				assert.Equal(t, tc.ko, m.NumberOfFailedCalls)
			})
		})
	}
}

// A consumer that leaves once the failure of an attempt is recorded, before the retry has
// decided, gets neither a retry nor the fallback source: nobody is waiting for them.
func TestSubscribeConsumerGoneAfterAFailureStopsRetryAndFallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb := newBreaker(t, breakerConfig())
		rt := newRetry(t, retry.Config{MaxAttempts: 3})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cb.Subscribe(func(e circuitbreaker.Event) {
			if e.Type == circuitbreaker.EventError {
				cancel() // synchronously, while the failure is recorded
			}
		})
		var retries, fallbacks, calls atomic.Int64
		rt.Subscribe(func(retry.Event) { retries.Add(1) })
		items, err := stream.Subscribe(ctx, levee.Patterns{Retry: rt, CircuitBreaker: cb},
			stream.Source[int](func(context.Context, func(int) error) error {
				calls.Add(1)
				return errBoom
			}),
			stream.WithFallbackSource(func(context.Context, error, func(int) error) error {
				fallbacks.Add(1)
				return nil
			}))
		require.NoError(t, err)
		assert.Empty(t, drain(items))
		synctest.Wait()
		assert.Equal(t, int64(1), calls.Load())
		assert.Equal(t, 1, cb.Metrics().NumberOfFailedCalls)
		assert.Zero(t, retries.Load(), "no retry event")
		assert.Zero(t, fallbacks.Load(), "no fallback")
	})
}
