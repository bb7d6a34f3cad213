package stream_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/stream"
)

// allocsPerElement runs a whole stream of n elements through run, twice as many times as
// needed to settle, and returns the allocations beyond those of a stream of 1 element,
// divided by n-1: the cost of one element once the operator's own set-up is paid.
func allocsPerElement(t *testing.T, n int, run func(n int)) float64 {
	t.Helper()
	one := testing.AllocsPerRun(20, func() { run(1) })
	many := testing.AllocsPerRun(20, func() { run(n) })
	return (many - one) / float64(n-1)
}

func defaultPatterns(t testing.TB) levee.Patterns {
	t.Helper()
	cb, err := circuitbreaker.New("cb", circuitbreaker.Config{})
	require.NoError(t, err)
	rt, err := retry.New("rt", retry.Config{})
	require.NoError(t, err)
	rl, err := ratelimiter.New("rl", ratelimiter.Config{LimitForPeriod: 1 << 20, LimitRefreshPeriod: time.Hour})
	require.NoError(t, err)
	bh, err := bulkhead.New("bh", bulkhead.Config{MaxConcurrentCalls: 4})
	require.NoError(t, err)
	return levee.Patterns{Retry: rt, CircuitBreaker: cb, RateLimiter: rl, Bulkhead: bh}
}

// The bench goal of the issue: Map with concurrency 1 over the default pipeline without
// TimeLimiter allocates nothing per element on the success path.
func TestMapAllocatesNothingPerElement(t *testing.T) {
	fb, err := fallback.New("fb", fallback.OnAny(fallback.Value(-1)))
	require.NoError(t, err)
	p := levee.DefaultPipeline(defaultPatterns(t), fb)
	double := func(_ context.Context, v int) (int, error) { return 2 * v, nil }
	for _, buffer := range []int{0, 64} {
		per := allocsPerElement(t, 2000, func(n int) {
			in := make(chan int, 64)
			go func() {
				for i := range n {
					in <- 1000 + i // above 255: boxing such an int would allocate
				}
				close(in)
			}()
			out, err := stream.Map(context.Background(), in, p, double, stream.Buffer(buffer))
			if err != nil {
				panic(err)
			}
			for r := range out {
				if r.Err != nil {
					panic(r.Err)
				}
			}
		})
		t.Logf("buffer %d: %.4f allocs per element", buffer, per)
		assert.Less(t, per, 0.01, "buffer %d", buffer)
	}
}

// The measurement sees allocations when there are some: a time limiter costs several per
// call.
func TestAllocsPerElementSeesTheTimeLimiter(t *testing.T) {
	p := levee.Compose[int]().WithTimeLimiter(newTimeLimiter(t, timelimiterConfig(time.Hour)))
	double := func(_ context.Context, v int) (int, error) { return 2 * v, nil }
	per := allocsPerElement(t, 200, func(n int) {
		in := make(chan int, n)
		for i := range n {
			in <- i
		}
		close(in)
		out, err := stream.Map(context.Background(), in, p, double)
		if err != nil {
			panic(err)
		}
		for range out {
		}
	})
	assert.Greater(t, per, 3.0)
}

// An element of a guarded subscription costs no allocation either.
func TestSubscribeAllocatesNothingPerElement(t *testing.T) {
	ps := defaultPatterns(t)
	per := allocsPerElement(t, 2000, func(n int) {
		items, err := stream.Subscribe(context.Background(), ps, stream.Source[int](func(_ context.Context, emit func(int) error) error {
			for i := range n {
				if err := emit(1000 + i); err != nil {
					return err
				}
			}
			return nil
		}), stream.Buffer(16))
		if err != nil {
			panic(err)
		}
		for range items {
		}
	})
	t.Logf("%.4f allocs per element", per)
	assert.Less(t, per, 0.01)
}

// OrderByKey costs no allocation per element either, once the lanes of the keys in flight at
// once are made: a key's lane and its waiting place are reused, and keys are not boxed.
func TestMapByKeyAllocatesNothingPerElement(t *testing.T) {
	double := func(_ context.Context, v int) (int, error) { return 2 * v, nil }
	names := []string{"ann", "bob", "cid", "dan", "eve", "fay", "gus", "hal"}
	per := allocsPerElement(t, 2000, func(n int) {
		in := make(chan int, 64)
		go func() {
			for i := range n {
				in <- 1000 + i
			}
			close(in)
		}()
		out, err := stream.Map(context.Background(), in, nil, double, stream.Concurrency(4), stream.Window(16),
			stream.OrderByKey(func(v int) string { return names[v%len(names)] }))
		if err != nil {
			panic(err)
		}
		for r := range out {
			if r.Err != nil {
				panic(r.Err)
			}
		}
	})
	t.Logf("%.4f allocs per element", per)
	assert.Less(t, per, 0.01)
}
