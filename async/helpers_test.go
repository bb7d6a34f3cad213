package async_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

var (
	errBoom  = errors.New("boom")
	errBuild = errors.New("cannot build the request")
)

func newBreaker(t testing.TB, cfg circuitbreaker.Config) *circuitbreaker.CircuitBreaker {
	t.Helper()
	cb, err := circuitbreaker.New("cb", cfg)
	require.NoError(t, err)
	return cb
}

// bigBreaker never opens: its window holds every call of a test, so its metrics count them all.
func bigBreaker(t testing.TB) *circuitbreaker.CircuitBreaker {
	return newBreaker(t, circuitbreaker.Config{
		SlidingWindowSize: 1 << 16, MinimumNumberOfCalls: 1 << 16,
	})
}

func newBulkhead(t testing.TB, max int) *bulkhead.Bulkhead {
	t.Helper()
	bh, err := bulkhead.New("bh", bulkhead.Config{MaxConcurrentCalls: max})
	require.NoError(t, err)
	return bh
}

func newRetry(t testing.TB, attempts int) *retry.Retry {
	t.Helper()
	r, err := retry.New("retry", retry.Config{MaxAttempts: attempts, WaitDuration: retry.NoWait})
	require.NoError(t, err)
	return r
}

func newTimeLimiter(t testing.TB, d time.Duration) *timelimiter.TimeLimiter {
	t.Helper()
	tl, err := timelimiter.New("tl", timelimiter.Config{TimeoutDuration: d})
	require.NoError(t, err)
	return tl
}

func newRateLimiter(t testing.TB, limit int, period time.Duration) *ratelimiter.RateLimiter {
	t.Helper()
	rl, err := ratelimiter.New("rl", ratelimiter.Config{
		LimitForPeriod: limit, LimitRefreshPeriod: period, TimeoutDuration: ratelimiter.NoWait,
	})
	require.NoError(t, err)
	return rl
}

// answering returns a fallback that answers every error with v.
func answering[T any](t testing.TB, v T) *fallback.Fallback[T] {
	t.Helper()
	f, err := fallback.New("fb", fallback.OnAny(fallback.Value(v)))
	require.NoError(t, err)
	return f
}

func value[T any](v T) levee.Call[T] {
	return func(context.Context) (T, error) { return v, nil }
}

func failing[T any](err error) levee.Call[T] {
	return func(context.Context) (T, error) {
		var zero T
		return zero, err
	}
}

// after returns a call that answers v, or fails with err when err is not nil, after d, or
// returns its context's error as soon as its context ends. It must run inside a synctest
// bubble for d to be fake time.
func after[T any](d time.Duration, v T, err error) levee.Call[T] {
	return func(ctx context.Context) (T, error) {
		var zero T
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-timer.C:
			if err != nil {
				return zero, err
			}
			return v, nil
		case <-ctx.Done():
			return zero, ctx.Err()
		}
	}
}

// blocker is a call that blocks until released or cancelled, and records what happened to it.
type blocker[T any] struct {
	v         T
	err       error
	release   chan struct{}
	started   chan struct{}
	startedN  atomic.Int64
	cancelled atomic.Int64
	returned  atomic.Int64
	once      sync.Once
}

func newBlocker[T any](v T, err error) *blocker[T] {
	return &blocker[T]{v: v, err: err, release: make(chan struct{}), started: make(chan struct{}, 1024)}
}

func (b *blocker[T]) call(ctx context.Context) (T, error) {
	b.startedN.Add(1)
	b.started <- struct{}{}
	defer b.returned.Add(1)
	var zero T
	select {
	case <-b.release:
		if b.err != nil {
			return zero, b.err
		}
		return b.v, nil
	case <-ctx.Done():
		b.cancelled.Add(1)
		return zero, ctx.Err()
	}
}

func (b *blocker[T]) unblock() { b.once.Do(func() { close(b.release) }) }

// awaitStart waits for the blocker to have been entered n times.
func (b *blocker[T]) awaitStart(t testing.TB, n int) {
	t.Helper()
	for range n {
		select {
		case <-b.started:
		case <-time.After(10 * time.Second):
			t.Fatal("the call did not start")
		}
	}
}

// breakerCounts returns what the breaker recorded: successes, failures, refusals.
func breakerCounts(cb *circuitbreaker.CircuitBreaker) [3]int {
	m := cb.Metrics()
	return [3]int{m.NumberOfSuccessfulCalls, m.NumberOfFailedCalls, m.NumberOfNotPermittedCalls}
}

// tryAcquire asks b for one permission and returns its answer; a granted permit is kept, as by
// a call still running.
func tryAcquire(b *circuitbreaker.CircuitBreaker) error {
	_, err := b.Acquire()
	return err
}
