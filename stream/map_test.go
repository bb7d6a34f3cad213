package stream_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/stream"
)

// slowSquare takes (v%7+1)*10ms of fake time, so that with several workers later elements
// often finish before earlier ones, and fails for multiples of failEvery (0: never).
func slowSquare(failEvery int) func(context.Context, int) (int, error) {
	return func(ctx context.Context, v int) (int, error) {
		select {
		case <-time.After(time.Duration(v%7+1) * 10 * time.Millisecond):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		if failEvery > 0 && v%failEvery == 0 {
			return 0, fmt.Errorf("element %d: %w", v, errBoom)
		}
		return v * v, nil
	}
}

func TestMapKeepsInputOrder(t *testing.T) {
	for _, c := range []int{1, 2, 5, 64} {
		t.Run(fmt.Sprint("concurrency ", c), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				out, err := stream.Map(ctx, feed(ctx, count(30)...), nil, slowSquare(4), stream.Concurrency(c))
				require.NoError(t, err)
				rs := drain(out)
				require.Len(t, rs, 30)
				for i, r := range rs {
					assert.Equal(t, i, r.Index)
					assert.Equal(t, i, r.In)
					if i%4 == 0 {
						assert.ErrorIs(t, r.Err, errBoom)
						assert.Zero(t, r.Value)
					} else {
						assert.NoError(t, r.Err)
						assert.Equal(t, i*i, r.Value)
					}
					assert.False(t, r.Fallback)
					assert.Nil(t, r.Cause)
				}
			})
		})
	}
}

func TestMapUnorderedEmitsAsCallsFinish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// Durations 40, 10, 30, 20 ms: with four workers they finish as 1, 3, 2, 0.
		durations := []time.Duration{40, 10, 30, 20}
		start := time.Now()
		var finished []time.Duration
		out, err := stream.Map(ctx, feed(ctx, 0, 1, 2, 3), nil, func(ctx context.Context, v int) (string, error) {
			time.Sleep(durations[v] * time.Millisecond)
			return fmt.Sprint("v", v), nil
		}, stream.Concurrency(4), stream.Unordered())
		require.NoError(t, err)
		var rs []stream.Result[int, string]
		for r := range out {
			rs = append(rs, r)
			finished = append(finished, time.Since(start))
		}
		assert.Equal(t, []int{1, 3, 2, 0}, indexes(rs))
		assert.Equal(t, []string{"v1", "v3", "v2", "v0"}, values(rs))
		assert.Equal(t, []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond, 40 * time.Millisecond}, finished)
	})
}

func TestMapOrderedHoldsResultsForEarlierElements(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		durations := []time.Duration{40, 10, 30, 20}
		start := time.Now()
		out, err := stream.Map(ctx, feed(ctx, 0, 1, 2, 3), nil, func(ctx context.Context, v int) (int, error) {
			time.Sleep(durations[v] * time.Millisecond)
			return v, nil
		}, stream.Concurrency(4))
		require.NoError(t, err)
		var at []time.Duration
		var rs []stream.Result[int, int]
		for r := range out {
			rs = append(rs, r)
			at = append(at, time.Since(start))
		}
		assert.Equal(t, []int{0, 1, 2, 3}, indexes(rs))
		// Everything waits for element 0, then comes out at once.
		assert.Equal(t, []time.Duration{40 * time.Millisecond, 40 * time.Millisecond, 40 * time.Millisecond, 40 * time.Millisecond}, at)
	})
}

func TestMapEveryElementYieldsExactlyOneResult(t *testing.T) {
	for _, unordered := range []bool{false, true} {
		for _, c := range []int{1, 3, 8} {
			t.Run(fmt.Sprintf("concurrency %d unordered %v", c, unordered), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					opts := []stream.Option{stream.Concurrency(c)}
					if unordered {
						opts = append(opts, stream.Unordered())
					}
					var calls atomic.Int64
					fn := slowSquare(3)
					out, err := stream.Map(ctx, feed(ctx, count(100)...), nil, func(ctx context.Context, v int) (int, error) {
						calls.Add(1)
						return fn(ctx, v)
					}, opts...)
					require.NoError(t, err)
					seen := make(map[int]int)
					failed := 0
					for r := range out {
						seen[r.Index]++
						assert.Equal(t, r.Index, r.In)
						if r.Err != nil {
							failed++
							assert.Zero(t, r.Index%3)
						} else {
							assert.Equal(t, r.In*r.In, r.Value)
						}
					}
					assert.Len(t, seen, 100)
					for i := range 100 {
						assert.Equal(t, 1, seen[i], "element %d", i)
					}
					assert.Equal(t, 34, failed)
					assert.Equal(t, int64(100), calls.Load())
				})
			})
		}
	}
}

func TestMapEmptyInput(t *testing.T) {
	for _, c := range []int{1, 4} {
		ctx, cancel := context.WithCancel(context.Background())
		out, err := stream.Map(ctx, feed[int](ctx), nil, slowSquare(0), stream.Concurrency(c))
		require.NoError(t, err)
		assert.Empty(t, drain(out))
		cancel()
	}
}

func TestMapStopOnErrorOrdered(t *testing.T) {
	for _, c := range []int{1, 4} {
		t.Run(fmt.Sprint("concurrency ", c), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var calls atomic.Int64
				in := feed(ctx, count(20)...)
				out, err := stream.Map(ctx, in, nil, func(ctx context.Context, v int) (int, error) {
					calls.Add(1)
					// Element 5 fails, and slowly, so that later ones finish (or fail) first.
					if v == 5 {
						time.Sleep(time.Second)
						return 0, errBoom
					}
					if v == 7 {
						return 0, errors.New("later failure")
					}
					return v, nil
				}, stream.Concurrency(c), stream.StopOnError())
				require.NoError(t, err)
				rs := drain(out)
				require.Equal(t, []int{0, 1, 2, 3, 4, 5}, indexes(rs))
				last := rs[5].Err
				require.ErrorIs(t, last, stream.ErrStopped)
				require.ErrorIs(t, last, errBoom)
				var stopped *stream.StoppedError[int]
				require.ErrorAs(t, last, &stopped)
				assert.Equal(t, 5, stopped.Index)
				assert.Equal(t, 5, stopped.In)
				assert.Equal(t, "stream: stopped at element 5 (5): boom", last.Error())
				for _, r := range rs[:5] {
					assert.NoError(t, r.Err)
				}
				// No element after the window was taken: element 5 and the c-1 after it at most.
				assert.Equal(t, int64(5+c), calls.Load())
			})
		})
	}
}

func TestMapStopOnErrorUnordered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var started, cancelled atomic.Int64
		out, err := stream.Map(ctx, feed(ctx, count(10)...), nil, func(ctx context.Context, v int) (int, error) {
			started.Add(1)
			d := time.Duration(10-v) * time.Millisecond // later elements finish first
			if v == 3 {
				return 0, errBoom // fails at once
			}
			select {
			case <-time.After(d):
				return v, nil
			case <-ctx.Done():
				cancelled.Add(1)
				return 0, ctx.Err()
			}
		}, stream.Concurrency(4), stream.Unordered(), stream.StopOnError())
		require.NoError(t, err)
		rs := drain(out)
		// Elements 0 to 3 are handed out; 3 fails at once, the first to finish.
		require.Len(t, rs, 1)
		assert.Equal(t, 3, rs[0].Index)
		var stopped *stream.StoppedError[int]
		require.ErrorAs(t, rs[0].Err, &stopped)
		assert.Equal(t, 3, stopped.Index)
		// Those of 0, 1 and 2 whose calls had started were cancelled; none started later.
		assert.LessOrEqual(t, started.Load(), int64(4))
		assert.Equal(t, started.Load()-1, cancelled.Load(), "the calls still running were cancelled")
	})
}

func TestMapPanicBecomesPanicError(t *testing.T) {
	cb := newBreaker(t, circuitbreaker.Config{})
	bh := newBulkhead(t, 2)
	p := levee.Compose[int]().WithBulkhead(bh).WithCircuitBreaker(cb)
	for _, c := range []int{1, 2} {
		ctx, cancel := context.WithCancel(context.Background())
		out, err := stream.Map(ctx, feed(ctx, 1, 2, 3), p, func(_ context.Context, v int) (int, error) {
			if v == 2 {
				panic(errBoom)
			}
			return v, nil
		}, stream.Concurrency(c))
		require.NoError(t, err)
		rs := drain(out)
		cancel()
		require.Len(t, rs, 3)
		var pe *levee.PanicError
		require.ErrorAs(t, rs[1].Err, &pe)
		assert.ErrorIs(t, rs[1].Err, errBoom)
		assert.NoError(t, rs[0].Err)
		assert.NoError(t, rs[2].Err)
		assert.Equal(t, 2, available(bh))
	}
	m := cb.Metrics()
	assert.Equal(t, 2, m.NumberOfFailedCalls, "the panics are recorded as failures")
	assert.Equal(t, 4, m.NumberOfSuccessfulCalls)
}

func TestMapNilContextMeansBackground(t *testing.T) {
	in := make(chan int, 2)
	in <- 1
	in <- 2
	close(in)
	//lint:ignore SA1012 a nil context is part of the contract under test
	out, err := stream.Map(nil, in, nil, func(ctx context.Context, v int) (int, error) { //nolint:staticcheck
		if ctx == nil {
			return 0, errors.New("nil ctx")
		}
		return v, nil
	})
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2}, values(drain(out)))
}

// A nil pipeline guards nothing: the call runs as it is, a panic still becoming an error.
func TestMapNilPipeline(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, err := stream.Map[int, int](ctx, feed(ctx, 1), nil, func(context.Context, int) (int, error) { panic("x") })
	require.NoError(t, err)
	rs := drain(out)
	require.Len(t, rs, 1)
	var pe *levee.PanicError
	assert.ErrorAs(t, rs[0].Err, &pe)
}

// A context already done starts nothing: the output closes without a call.
func TestMapWithADoneContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []int{1, 3} {
		in := make(chan int, 3)
		in <- 1
		in <- 2
		in <- 3
		var calls atomic.Int64
		out, err := stream.Map(ctx, in, nil, func(_ context.Context, v int) (int, error) { calls.Add(1); return v, nil }, stream.Concurrency(c))
		require.NoError(t, err)
		assert.Empty(t, drain(out))
		assert.Zero(t, calls.Load())
	}
}
