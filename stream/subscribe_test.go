package stream_test

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
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/stream"
)

// numbers returns a Source that counts its builds, emits from..from+n-1 and returns end.
func numbers(builds *atomic.Int64, from, n int, end error) stream.Source[int] {
	return func(ctx context.Context, emit func(int) error) error {
		if builds != nil {
			builds.Add(1)
		}
		for i := range n {
			if err := emit(from + i); err != nil {
				return err
			}
		}
		return end
	}
}

func TestSubscribeDeliversTheStream(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var builds atomic.Int64
	items, err := stream.Subscribe(ctx, levee.Patterns{}, numbers(&builds, 10, 3, nil))
	require.NoError(t, err)
	assert.Equal(t, []stream.Item[int]{{Value: 10, Attempt: 1}, {Value: 11, Attempt: 1}, {Value: 12, Attempt: 1}}, drain(items))
	assert.Equal(t, int64(1), builds.Load())
}

func TestSubscribeFailureEndsWithAnErrorItem(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	items, err := stream.Subscribe(ctx, levee.Patterns{}, numbers(nil, 0, 2, errBoom))
	require.NoError(t, err)
	assert.Equal(t, []stream.Item[int]{{Value: 0, Attempt: 1}, {Value: 1, Attempt: 1}, {Err: errBoom}}, drain(items))
}

func TestSubscribeIsLazy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var builds atomic.Int64
		items, err := stream.Subscribe(ctx, levee.Patterns{}, numbers(&builds, 0, 3, nil))
		require.NoError(t, err)
		synctest.Wait()
		assert.Equal(t, int64(1), builds.Load(), "built once subscribed")
		it := <-items
		assert.Equal(t, 0, it.Value)
		synctest.Wait()
		// Backpressure: the source waits in emit for the consumer.
		assert.Equal(t, int64(1), builds.Load())
		assert.Len(t, drain(items), 2)
	})
}

func TestSubscribePanicInSourceIsAFailure(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	items, err := stream.Subscribe(ctx, levee.Patterns{}, stream.Source[int](func(_ context.Context, emit func(int) error) error {
		_ = emit(1)
		panic(errBoom)
	}))
	require.NoError(t, err)
	all := drain(items)
	require.Len(t, all, 2)
	var pe *levee.PanicError
	require.ErrorAs(t, all[1].Err, &pe)
	assert.ErrorIs(t, all[1].Err, errBoom)
}

func TestFromChan(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var opened atomic.Int64
	src := stream.FromChan(func(ctx context.Context) (<-chan string, error) {
		opened.Add(1)
		return feed(ctx, "a", "b"), nil
	})
	items, err := stream.Subscribe(ctx, levee.Patterns{}, src)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, itemValues(drain(items)))
	assert.Equal(t, int64(1), opened.Load())

	items, err = stream.Subscribe(ctx, levee.Patterns{}, stream.FromChan(func(context.Context) (<-chan string, error) { return nil, nil }))
	require.NoError(t, err)
	assert.Equal(t, []stream.Item[string]{{Err: stream.ErrNilChannel}}, drain(items))
}

// The attempt's context is cancelled when the attempt ends, so the feeder FromChan's opener
// started ends with it, even when the stream is cut short.
func TestFromChanStopsItsFeederWhenTheAttemptEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		feederDone := make(chan struct{})
		tl := newTimeLimiter(t, timelimiterConfig(time.Second))
		src := stream.FromChan(func(ctx context.Context) (<-chan int, error) {
			ch := make(chan int)
			go func() {
				defer close(feederDone)
				for i := 0; ; i++ {
					if i == 2 {
						time.Sleep(time.Hour) // a stall: the gap limit ends the attempt
					}
					select {
					case ch <- i:
					case <-ctx.Done():
						return
					}
				}
			}()
			return ch, nil
		})
		items, err := stream.Subscribe(ctx, levee.Patterns{TimeLimiter: tl}, src)
		require.NoError(t, err)
		all := drain(items)
		require.Len(t, all, 3)
		assert.ErrorIs(t, all[2].Err, context.DeadlineExceeded)
		<-feederDone
	})
}

func TestSubscribeEmitAfterReturnIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		kept := make(chan func(int) error, 1)
		items, err := stream.Subscribe(ctx, levee.Patterns{}, stream.Source[int](func(_ context.Context, emit func(int) error) error {
			kept <- emit
			return emit(1)
		}))
		require.NoError(t, err)
		assert.Equal(t, []int{1}, itemValues(drain(items)))
		emit := <-kept
		assert.EqualError(t, emit(2), "stream: emit called after the source returned")
	})
}

// emit is safe for concurrent use: every element of every goroutine arrives once.
func TestSubscribeConcurrentEmits(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	items, err := stream.Subscribe(ctx, levee.Patterns{}, stream.Source[int](func(_ context.Context, emit func(int) error) error {
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 100 {
					if emit(g*100+i) != nil {
						return
					}
				}
			})
		}
		wg.Wait()
		return nil
	}))
	require.NoError(t, err)
	seen := make(map[int]bool)
	for it := range items {
		require.NoError(t, it.Err)
		assert.False(t, seen[it.Value])
		seen[it.Value] = true
	}
	assert.Len(t, seen, 800)
}

func TestSubscribeFallbackSourceReplacesAFailedStream(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var causes []error
	items, err := stream.Subscribe(ctx, levee.Patterns{}, numbers(nil, 1, 2, errBoom),
		stream.WithFallbackSource(func(_ context.Context, cause error, emit func(int) error) error {
			causes = append(causes, cause)
			for _, v := range []int{-1, -2} {
				if err := emit(v); err != nil {
					return err
				}
			}
			return nil
		}))
	require.NoError(t, err)
	assert.Equal(t, []stream.Item[int]{
		{Value: 1, Attempt: 1}, {Value: 2, Attempt: 1},
		{Value: -1, Fallback: true}, {Value: -2, Fallback: true},
	}, drain(items))
	assert.Equal(t, []error{errBoom}, causes)
}

func TestSubscribeFallbackSourceErrors(t *testing.T) {
	fbErr := errors.New("no cache")
	for _, tc := range []struct {
		name  string
		fb    func(context.Context, error, func(int) error) error
		check func(t *testing.T, err error)
	}{
		{"declines with the cause", func(_ context.Context, cause error, _ func(int) error) error { return cause },
			func(t *testing.T, err error) { assert.Equal(t, errBoom, err) }},
		{"wraps the cause", func(_ context.Context, cause error, _ func(int) error) error { return errors.Join(fbErr, cause) },
			func(t *testing.T, err error) {
				assert.EqualError(t, err, "no cache\nboom")
				var fe *fallback.Error
				assert.False(t, errors.As(err, &fe), "already holds the cause: returned as it is")
			}},
		{"fails", func(context.Context, error, func(int) error) error { return fbErr },
			func(t *testing.T, err error) {
				var fe *fallback.Error
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, errBoom, fe.Cause)
				assert.Equal(t, fbErr, fe.Err)
				assert.ErrorIs(t, err, errBoom)
			}},
		{"panics", func(context.Context, error, func(int) error) error { panic("fallback bug") },
			func(t *testing.T, err error) {
				var pe *levee.PanicError
				require.ErrorAs(t, err, &pe)
				assert.Equal(t, "fallback bug", pe.Value)
				assert.ErrorIs(t, err, errBoom)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			items, err := stream.Subscribe(ctx, levee.Patterns{}, numbers(nil, 0, 0, errBoom), stream.WithFallbackSource(tc.fb))
			require.NoError(t, err)
			all := drain(items)
			require.Len(t, all, 1)
			tc.check(t, all[0].Err)
		})
	}
}

// The source is built inside the guarded execution: an error returned or a panic raised while
// building it reaches the fallback (the Reactor pitfall of a Mono method that throws before
// returning its Mono cannot happen).
func TestSubscribeBuildFailuresReachTheFallback(t *testing.T) {
	errDial := errors.New("dial failed")
	for _, tc := range []struct {
		name  string
		src   stream.Source[int]
		check func(t *testing.T, cause error)
	}{
		{"FromChan opener returns an error", stream.FromChan(func(context.Context) (<-chan int, error) { return nil, errDial }),
			func(t *testing.T, cause error) { assert.Equal(t, errDial, cause) }},
		{"FromChan opener panics", stream.FromChan(func(context.Context) (<-chan int, error) { panic(errDial) }),
			func(t *testing.T, cause error) {
				var pe *levee.PanicError
				require.ErrorAs(t, cause, &pe)
				assert.ErrorIs(t, cause, errDial)
			}},
		{"Source fails before its first element", func(context.Context, func(int) error) error { return errDial },
			func(t *testing.T, cause error) { assert.Equal(t, errDial, cause) }},
		{"Source panics before its first element", func(context.Context, func(int) error) error { panic("setup bug") },
			func(t *testing.T, cause error) {
				var pe *levee.PanicError
				require.ErrorAs(t, cause, &pe)
				assert.Equal(t, "setup bug", pe.Value)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cb := newBreaker(t, breakerConfig())
			var causes []error
			items, err := stream.Subscribe(ctx, levee.Patterns{CircuitBreaker: cb}, tc.src,
				stream.WithFallbackSource(func(_ context.Context, cause error, emit func(int) error) error {
					causes = append(causes, cause)
					return emit(-1)
				}))
			require.NoError(t, err)
			assert.Equal(t, []stream.Item[int]{{Value: -1, Fallback: true}}, drain(items))
			require.Len(t, causes, 1)
			tc.check(t, causes[0])
			assert.Equal(t, 1, cb.Metrics().NumberOfFailedCalls, "the breaker recorded the failure")
		})
	}
}

func TestSubscribeFallbackNotRunWhenTheConsumerCancels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var fallbacks atomic.Int64
		items, err := stream.Subscribe(ctx, levee.Patterns{}, stream.Source[int](func(ctx context.Context, emit func(int) error) error {
			<-ctx.Done()
			return errBoom // not the cancellation: still, the consumer left
		}), stream.WithFallbackSource(func(context.Context, error, func(int) error) error { fallbacks.Add(1); return nil }))
		require.NoError(t, err)
		synctest.Wait()
		cancel()
		assert.Empty(t, drain(items))
		assert.Zero(t, fallbacks.Load())
	})
}

func TestSubscribeWithADoneContext(t *testing.T) {
	cb := newBreaker(t, breakerConfig())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var builds atomic.Int64
	items, err := stream.Subscribe(ctx, levee.Patterns{CircuitBreaker: cb}, numbers(&builds, 0, 3, nil))
	require.NoError(t, err)
	assert.Empty(t, drain(items))
	assert.Zero(t, builds.Load())
	assert.NoError(t, tryAcquire(cb))
	assert.Zero(t, cb.Metrics().NumberOfBufferedCalls)
}

func TestSubscribeNilContextMeansBackground(t *testing.T) {
	//lint:ignore SA1012 a nil context is part of the contract under test
	items, err := stream.Subscribe(nil, levee.Patterns{}, stream.Source[int](func(ctx context.Context, emit func(int) error) error { //nolint:staticcheck
		if ctx == nil {
			return errors.New("nil ctx")
		}
		return emit(1)
	}))
	require.NoError(t, err)
	assert.Equal(t, []stream.Item[int]{{Value: 1, Attempt: 1}}, drain(items))
}
