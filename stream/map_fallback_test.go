package stream_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/stream"
)

func TestMapPipelineFallbackMarksResult(t *testing.T) {
	cached := errors.New("unavailable")
	fb, err := fallback.New("price", fallback.OnError(cached, fallback.Value(-1)))
	require.NoError(t, err)
	p := levee.Compose[int]().WithFallback(fb)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, err := stream.Map(ctx, feed(ctx, 1, 2, 3, 4), p, func(_ context.Context, v int) (int, error) {
		switch v {
		case 2:
			return 0, cached
		case 3:
			return 0, errBoom // no handler: passes through
		}
		return v * 10, nil
	})
	require.NoError(t, err)
	rs := drain(out)
	require.Len(t, rs, 4)
	assert.Equal(t, stream.Result[int, int]{Index: 0, In: 1, Value: 10}, rs[0])
	assert.Equal(t, stream.Result[int, int]{Index: 1, In: 2, Value: -1, Fallback: true, Cause: cached}, rs[1])
	assert.Equal(t, stream.Result[int, int]{Index: 2, In: 3, Err: errBoom}, rs[2])
	assert.Equal(t, stream.Result[int, int]{Index: 3, In: 4, Value: 40}, rs[3])
}

func TestMapElementFallback(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fbErr := errors.New("no cached price")
	var seen []error
	out, err := stream.Map(ctx, feed(ctx, 1, 2, 3, 4), nil,
		func(_ context.Context, v int) (int, error) {
			if v == 1 {
				return v, nil
			}
			return 0, fmt.Errorf("element %d: %w", v, errBoom)
		},
		stream.WithFallback(func(_ context.Context, v int, err error) (int, error) {
			seen = append(seen, err)
			switch v {
			case 3:
				return 0, fbErr
			case 4:
				panic("fallback bug")
			}
			return -v, nil
		}))
	require.NoError(t, err)
	rs := drain(out)
	require.Len(t, rs, 4)
	assert.Equal(t, stream.Result[int, int]{Index: 0, In: 1, Value: 1}, rs[0])

	assert.Equal(t, -2, rs[1].Value)
	assert.NoError(t, rs[1].Err)
	assert.True(t, rs[1].Fallback)
	assert.EqualError(t, rs[1].Cause, "element 2: boom")

	var fe *fallback.Error
	require.ErrorAs(t, rs[2].Err, &fe)
	assert.ErrorIs(t, rs[2].Err, fbErr)
	assert.ErrorIs(t, rs[2].Err, errBoom, "the original error stays in the chain")
	assert.False(t, rs[2].Fallback)

	var pe *levee.PanicError
	require.ErrorAs(t, rs[3].Err, &pe)
	assert.Equal(t, "fallback bug", pe.Value)
	assert.ErrorIs(t, rs[3].Err, errBoom)

	require.Len(t, seen, 3)
	for _, e := range seen {
		assert.ErrorIs(t, e, errBoom)
	}
}

// The element fallback runs outermost: after the pipeline's retries and its own fallback.
func TestMapElementFallbackRunsAfterThePipeline(t *testing.T) {
	rt := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
	p := levee.Compose[int]().WithRetry(rt)
	var calls, fallbacks atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, err := stream.Map(ctx, feed(ctx, 7), p,
		func(context.Context, int) (int, error) { calls.Add(1); return 0, errBoom },
		stream.WithFallback(func(_ context.Context, v int, err error) (int, error) {
			fallbacks.Add(1)
			assert.Equal(t, int64(3), calls.Load(), "the retries are over")
			assert.ErrorIs(t, err, retry.ErrMaxRetriesExceeded)
			return v, nil
		}))
	require.NoError(t, err)
	rs := drain(out)
	require.Len(t, rs, 1)
	assert.Equal(t, 7, rs[0].Value)
	assert.True(t, rs[0].Fallback)
	assert.ErrorIs(t, rs[0].Cause, retry.ErrMaxRetriesExceeded)
	assert.Equal(t, int64(1), fallbacks.Load())
}

// The breaker rejects elements once open; a fallback answers them without a call.
func TestMapOpenBreakerRejectsElements(t *testing.T) {
	cb := newBreaker(t, circuitbreaker.Config{SlidingWindowSize: 2, MinimumNumberOfCalls: 2})
	p := levee.Compose[int]().WithCircuitBreaker(cb)
	var calls atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, err := stream.Map(ctx, feed(ctx, count(5)...), p,
		func(context.Context, int) (int, error) { calls.Add(1); return 0, errBoom },
		stream.WithFallback(func(_ context.Context, v int, err error) (int, error) {
			if errors.Is(err, circuitbreaker.ErrCallNotPermitted) {
				return 100 + v, nil
			}
			return 0, err
		}))
	require.NoError(t, err)
	rs := drain(out)
	require.Len(t, rs, 5)
	assert.Equal(t, int64(2), calls.Load())
	for _, r := range rs[:2] {
		assert.ErrorIs(t, r.Err, errBoom)
	}
	for _, r := range rs[2:] {
		assert.Equal(t, 100+r.In, r.Value)
		assert.True(t, r.Fallback)
		assert.ErrorIs(t, r.Cause, circuitbreaker.ErrCallNotPermitted)
	}
	assert.Equal(t, circuitbreaker.Open, cb.State())
	assert.Equal(t, 3, cb.Metrics().NumberOfNotPermittedCalls)
}

// An element a fallback answered is not a failure: StopOnError goes on.
func TestMapStopOnErrorIgnoresAnsweredElements(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, err := stream.Map(ctx, feed(ctx, 1, 2, 3, 4), nil, func(_ context.Context, v int) (int, error) {
		if v%2 == 0 {
			return 0, errBoom
		}
		return v, nil
	}, stream.StopOnError(), stream.WithFallback(func(_ context.Context, v int, err error) (int, error) {
		if v == 2 {
			return -2, nil
		}
		return 0, err
	}))
	require.NoError(t, err)
	rs := drain(out)
	require.Equal(t, []int{0, 1, 2, 3}, indexes(rs))
	assert.True(t, rs[1].Fallback)
	assert.ErrorIs(t, rs[3].Err, stream.ErrStopped)
	assert.ErrorIs(t, rs[3].Err, errBoom)
}
