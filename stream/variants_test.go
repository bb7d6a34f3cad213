package stream_test

import (
	"context"
	"fmt"
	"strings"
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

func TestFilterKeepsDropsAndReportsFailures(t *testing.T) {
	for _, c := range []int{1, 3} {
		t.Run(fmt.Sprint("concurrency ", c), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out, err := stream.Filter(ctx, feed(ctx, count(10)...), nil, func(_ context.Context, v int) (bool, error) {
				if v == 4 {
					return false, errBoom
				}
				return v%2 == 0, nil
			}, stream.Concurrency(c))
			require.NoError(t, err)
			rs := drain(out)
			require.Equal(t, []int{0, 2, 4, 6, 8}, indexes(rs))
			assert.Equal(t, []int{0, 2, 0, 6, 8}, values(rs))
			for _, r := range rs {
				if r.Index == 4 {
					assert.ErrorIs(t, r.Err, errBoom)
				} else {
					assert.NoError(t, r.Err)
					assert.Equal(t, r.In, r.Value)
				}
			}
		})
	}
}

func TestFilterFallbackDecides(t *testing.T) {
	keepOnDoubt, err := fallback.New("keep", fallback.OnAny(fallback.Value(true)))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, err := stream.Filter(ctx, feed(ctx, "a", "bad", "c"), levee.Compose[bool]().WithFallback(keepOnDoubt),
		func(_ context.Context, s string) (bool, error) {
			if s == "bad" {
				return false, errBoom
			}
			return s != "c", nil
		})
	require.NoError(t, err)
	rs := drain(out)
	require.Len(t, rs, 2)
	assert.Equal(t, stream.Result[string, string]{Index: 0, In: "a", Value: "a"}, rs[0])
	assert.Equal(t, stream.Result[string, string]{Index: 1, In: "bad", Value: "bad", Fallback: true, Cause: errBoom}, rs[1])
}

func TestFilterStopOnError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, err := stream.Filter(ctx, feed(ctx, count(10)...), nil, func(_ context.Context, v int) (bool, error) {
		if v == 5 {
			return false, errBoom
		}
		return v%2 == 1, nil
	}, stream.StopOnError(), stream.WithFallback(func(_ context.Context, v int, err error) (bool, error) {
		return false, err // declines
	}))
	require.NoError(t, err)
	rs := drain(out)
	require.Equal(t, []int{1, 3, 5}, indexes(rs))
	assert.ErrorIs(t, rs[2].Err, stream.ErrStopped)
	assert.ErrorIs(t, rs[2].Err, errBoom)
}

func TestFlatMapExpandsEachCall(t *testing.T) {
	for _, c := range []int{1, 4} {
		t.Run(fmt.Sprint("concurrency ", c), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				out, err := stream.FlatMap(ctx, feed(ctx, "ab", "", "boom", "cde"), nil,
					func(_ context.Context, s string) ([]string, error) {
						time.Sleep(time.Duration(10-len(s)) * time.Millisecond)
						if s == "boom" {
							return []string{"never"}, errBoom
						}
						return strings.Split(s, "")[:len(s)], nil
					}, stream.Concurrency(c))
				require.NoError(t, err)
				rs := drain(out)
				require.Equal(t, []int{0, 0, 2, 3, 3, 3}, indexes(rs))
				assert.Equal(t, []string{"a", "b", "", "c", "d", "e"}, values(rs))
				assert.ErrorIs(t, rs[2].Err, errBoom)
				assert.Equal(t, "boom", rs[2].In)
				for i, r := range rs {
					if i != 2 {
						assert.NoError(t, r.Err)
					}
				}
			})
		})
	}
}

func TestFlatMapFallbackAnswersWithASlice(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, err := stream.FlatMap(ctx, feed(ctx, 1, 2), nil, func(_ context.Context, v int) ([]int, error) {
		if v == 2 {
			return nil, errBoom
		}
		return []int{v, v}, nil
	}, stream.WithFallback(func(_ context.Context, v int, _ error) ([]int, error) { return []int{-v, -v, -v}, nil }))
	require.NoError(t, err)
	rs := drain(out)
	assert.Equal(t, []int{1, 1, -2, -2, -2}, values(rs))
	for _, r := range rs[2:] {
		assert.True(t, r.Fallback)
		assert.Equal(t, errBoom, r.Cause)
		assert.Equal(t, 1, r.Index)
	}
}

func TestFlatMapStopOnError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, err := stream.FlatMap(ctx, feed(ctx, 1, 2, 3), nil, func(_ context.Context, v int) ([]int, error) {
		if v == 2 {
			return nil, errBoom
		}
		return []int{v, v}, nil
	}, stream.StopOnError(), stream.Concurrency(2))
	require.NoError(t, err)
	rs := drain(out)
	require.Equal(t, []int{0, 0, 1}, indexes(rs))
	var stopped *stream.StoppedError[int]
	require.ErrorAs(t, rs[2].Err, &stopped)
	assert.Equal(t, 2, stopped.In)
}

func TestBatchCutsBySize(t *testing.T) {
	for _, c := range []int{1, 3} {
		t.Run(fmt.Sprint("concurrency ", c), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out, err := stream.Batch(ctx, feed(ctx, count(10)...), 4, 0, nil, func(_ context.Context, b []int) (int, error) {
				sum := 0
				for _, v := range b {
					sum += v
				}
				return sum, nil
			}, stream.Concurrency(c))
			require.NoError(t, err)
			rs := drain(out)
			require.Equal(t, []int{0, 1, 2}, indexes(rs))
			assert.Equal(t, [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}}, []([]int){rs[0].In, rs[1].In, rs[2].In})
			assert.Equal(t, []int{6, 22, 17}, values(rs))
		})
	}
}

// A batch is cut by size or by time, whichever comes first; the time counts from the batch's
// first element.
func TestBatchCutsByTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		in := make(chan int)
		start := time.Now()
		out, err := stream.Batch(ctx, in, 3, 100*time.Millisecond, nil, func(_ context.Context, b []int) (time.Duration, error) {
			return time.Since(start), nil
		})
		require.NoError(t, err)
		go func() {
			defer close(in)
			in <- 1 // t=0: batch A starts
			time.Sleep(60 * time.Millisecond)
			in <- 2 // t=60
			time.Sleep(60 * time.Millisecond)
			in <- 3 // t=120: A was cut at 100; batch B starts
			in <- 4
			in <- 5 // B is full at 120
			time.Sleep(500 * time.Millisecond)
			in <- 6 // t=620: batch C starts
			time.Sleep(30 * time.Millisecond)
			// t=650: the input closes, cutting C
		}()
		rs := drain(out)
		require.Len(t, rs, 3)
		assert.Equal(t, []int{1, 2}, rs[0].In)
		assert.Equal(t, 100*time.Millisecond, rs[0].Value)
		assert.Equal(t, []int{3, 4, 5}, rs[1].In)
		assert.Equal(t, 120*time.Millisecond, rs[1].Value)
		assert.Equal(t, []int{6}, rs[2].In)
		assert.Equal(t, 650*time.Millisecond, rs[2].Value)
	})
}

func TestBatchFailuresAndFallback(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls atomic.Int64
	out, err := stream.Batch(ctx, feed(ctx, count(6)...), 2, 0, nil, func(_ context.Context, b []int) (string, error) {
		calls.Add(1)
		if b[0] == 2 {
			return "", errBoom
		}
		return fmt.Sprint(b), nil
	}, stream.WithFallback(func(_ context.Context, b []int, err error) (string, error) {
		return "fallback " + fmt.Sprint(b), nil
	}))
	require.NoError(t, err)
	rs := drain(out)
	assert.Equal(t, []string{"[0 1]", "fallback [2 3]", "[4 5]"}, values(rs))
	assert.True(t, rs[1].Fallback)
	assert.Equal(t, int64(3), calls.Load())
}

func TestBatchStopOnErrorNamesTheBatch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, err := stream.Batch(ctx, feed(ctx, count(10)...), 3, 0, nil, func(_ context.Context, b []int) (int, error) {
		if b[0] == 3 {
			return 0, errBoom
		}
		return len(b), nil
	}, stream.StopOnError())
	require.NoError(t, err)
	rs := drain(out)
	require.Len(t, rs, 2)
	var stopped *stream.StoppedError[[]int]
	require.ErrorAs(t, rs[1].Err, &stopped)
	assert.Equal(t, 1, stopped.Index)
	assert.Equal(t, []int{3, 4, 5}, stopped.In)
	assert.Equal(t, "stream: stopped at element 1 ([3 4 5]): boom", rs[1].Err.Error())
}

func TestBatchInvalidArguments(t *testing.T) {
	ctx := context.Background()
	fn := func(context.Context, []int) (int, error) { return 0, nil }
	in := make(chan int)
	for _, tc := range []struct {
		name string
		size int
		wait time.Duration
		in   chan int
		fn   func(context.Context, []int) (int, error)
		want string
	}{
		{"size 0", 0, 0, in, fn, "stream: Batch size must be >= 1, got 0"},
		{"size -1", -1, 0, in, fn, "stream: Batch size must be >= 1, got -1"},
		{"negative wait", 1, -time.Nanosecond, in, fn, "stream: Batch wait must be >= 0 (0: no time limit), got -1ns"},
		{"nil input", 1, 0, nil, fn, stream.ErrNilInput.Error()},
		{"nil function", 1, 0, in, nil, levee.ErrNilCall.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := stream.Batch(ctx, tc.in, tc.size, tc.wait, nil, tc.fn)
			assert.EqualError(t, err, tc.want)
			assert.Nil(t, out)
		})
	}
	_, err := stream.Batch(ctx, in, 1, 0, nil, fn, stream.WithFallback(func(context.Context, int, error) (int, error) { return 0, nil }))
	assert.EqualError(t, err, "stream: Batch needs a WithFallback function of type func(context.Context, []int, error) (int, error), got func(context.Context, int, error) (int, error)")
}
