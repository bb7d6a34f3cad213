package stream_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/stream"
	"github.com/levee-go/levee/timelimiter"
)

var errBoom = errors.New("boom")

// feed returns a channel that delivers vs, then is closed; its goroutine also ends when ctx
// is done, as the documentation asks of every feeder.
func feed[V any](ctx context.Context, vs ...V) <-chan V {
	ch := make(chan V)
	go func() {
		defer close(ch)
		for _, v := range vs {
			select {
			case ch <- v:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}

// count returns 0, 1, ..., n-1.
func count(n int) []int {
	vs := make([]int, n)
	for i := range vs {
		vs[i] = i
	}
	return vs
}

// drain reads ch to its end.
func drain[T any](ch <-chan T) []T {
	var all []T
	for v := range ch {
		all = append(all, v)
	}
	return all
}

func indexes[V, R any](rs []stream.Result[V, R]) []int {
	is := make([]int, len(rs))
	for i, r := range rs {
		is[i] = r.Index
	}
	return is
}

func values[V, R any](rs []stream.Result[V, R]) []R {
	vs := make([]R, len(rs))
	for i, r := range rs {
		vs[i] = r.Value
	}
	return vs
}

func itemValues[T any](items []stream.Item[T]) []T {
	var vs []T
	for _, it := range items {
		if it.Err == nil {
			vs = append(vs, it.Value)
		}
	}
	return vs
}

// inflight counts the calls running now and the most seen at once.
type inflight struct{ now, max atomic.Int64 }

func (f *inflight) enter() {
	n := f.now.Add(1)
	for {
		m := f.max.Load()
		if n <= m || f.max.CompareAndSwap(m, n) {
			return
		}
	}
}

func (f *inflight) leave() { f.now.Add(-1) }

func newBreaker(t testing.TB, cfg circuitbreaker.Config) *circuitbreaker.CircuitBreaker {
	t.Helper()
	cb, err := circuitbreaker.New("cb", cfg)
	require.NoError(t, err)
	return cb
}

func newBulkhead(t testing.TB, max int) *bulkhead.Bulkhead {
	t.Helper()
	bh, err := bulkhead.New("bh", bulkhead.Config{MaxConcurrentCalls: max})
	require.NoError(t, err)
	return bh
}

func newRetry(t testing.TB, cfg retry.Config) *retry.Retry {
	t.Helper()
	rt, err := retry.New("rt", cfg)
	require.NoError(t, err)
	return rt
}

func newRateLimiter(t testing.TB, cfg ratelimiter.Config) *ratelimiter.RateLimiter {
	t.Helper()
	rl, err := ratelimiter.New("rl", cfg)
	require.NoError(t, err)
	return rl
}

func newTimeLimiter(t testing.TB, cfg timelimiter.Config) *timelimiter.TimeLimiter {
	t.Helper()
	tl, err := timelimiter.New("tl", cfg)
	require.NoError(t, err)
	return tl
}

// available is the bulkhead's number of free permits.
func available(bh *bulkhead.Bulkhead) int { return bh.Metrics().AvailableConcurrentCalls }

// bubbleTB hides *testing.T from rapid, which would otherwise call t.Deadline, a call
// testing forbids inside a synctest bubble.
type bubbleTB struct{ testing.TB }

func timelimiterConfig(d time.Duration) timelimiter.Config {
	return timelimiter.Config{TimeoutDuration: d}
}

// breakerConfig never opens on its own: it counts outcomes for the tests to read.
func breakerConfig() circuitbreaker.Config {
	return circuitbreaker.Config{SlidingWindowSize: 1000, MinimumNumberOfCalls: 1000}
}

// tryAcquire asks b for one permission and returns its answer; a granted permit is kept, as by
// a call still running.
func tryAcquire(b *circuitbreaker.CircuitBreaker) error {
	_, err := b.Acquire()
	return err
}
