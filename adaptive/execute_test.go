package adaptive_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/retry"
)

func newLimiter(t *testing.T, cfg adaptive.Config) *adaptive.Limiter {
	t.Helper()
	l, err := adaptive.New("dependency", cfg)
	require.NoError(t, err)
	return l
}

func TestConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		cfg  adaptive.Config
		want string
	}{
		{adaptive.Config{Algorithm: 3}, "adaptive: Algorithm must be Vegas, AIMD or Gradient2, got Algorithm(3)"},
		{adaptive.Config{MaxLimit: -1}, "adaptive: MaxLimit must be in [1, 1048576], got -1"},
		{adaptive.Config{MaxLimit: 1<<20 + 1}, "adaptive: MaxLimit must be in [1, 1048576], got 1048577"},
		{adaptive.Config{MinLimit: -2}, "adaptive: MinLimit must be in [1, MaxLimit (1000)], got -2"},
		{adaptive.Config{MinLimit: 30, MaxLimit: 20}, "adaptive: MinLimit must be in [1, MaxLimit (20)], got 30"},
		{adaptive.Config{InitialLimit: 5, MinLimit: 6}, "adaptive: InitialLimit must be in [MinLimit (6), MaxLimit (1000)], got 5"},
		{adaptive.Config{InitialLimit: 1001}, "adaptive: InitialLimit must be in [MinLimit (1), MaxLimit (1000)], got 1001"},
		{adaptive.Config{Alpha: -1}, "adaptive: Alpha must be in (0, 1e6], got -1"},
		{adaptive.Config{Beta: 1}, "adaptive: Beta must be in (Alpha (1), 1e6], got 1"},
		{adaptive.Config{BackoffRatio: 1}, "adaptive: BackoffRatio must be in [0.5, 1), got 1"},
		{adaptive.Config{BackoffRatio: 0.4}, "adaptive: BackoffRatio must be in [0.5, 1), got 0.4"},
		{adaptive.Config{Timeout: -1}, "adaptive: Timeout must be > 0, got -1ns"},
		{adaptive.Config{MaxQueued: -1}, "adaptive: MaxQueued must be >= 0, got -1"},
		{adaptive.Config{MaxWaitDuration: -time.Second}, "adaptive: MaxWaitDuration must be > 0, got -1s"},
		{adaptive.Config{Tolerance: 0.9}, "adaptive: Tolerance must be in [1, 1e6], got 0.9"},
		{adaptive.Config{Smoothing: 1.5}, "adaptive: Smoothing must be in (0, 1], got 1.5"},
		{adaptive.Config{Smoothing: -0.1}, "adaptive: Smoothing must be in (0, 1], got -0.1"},
		{adaptive.Config{QueueSize: -1}, "adaptive: QueueSize must be in [0, 1048576] or NoQueueSize, got -1"},
		{adaptive.Config{LongWindow: -5}, "adaptive: LongWindow must be in [1, 1000000], got -5"},
		{adaptive.Config{ProbeInterval: -time.Second}, "adaptive: ProbeInterval must be > 0 or NoProbe, got -1s"},
		{adaptive.Config{ProbeLimit: 2000}, "adaptive: ProbeLimit must be in [MinLimit (1), MaxLimit (1000)], got 2000"},
		{adaptive.Config{ProbeSamples: -1}, "adaptive: ProbeSamples must be in [1, 1000000], got -1"},
		{adaptive.Config{LatencyCeiling: -time.Millisecond}, "adaptive: LatencyCeiling must be >= 0, got -1ms"},
	} {
		l, err := adaptive.New("x", tc.cfg)
		assert.Nil(t, l)
		assert.EqualError(t, err, tc.want)
	}
	l := newLimiter(t, adaptive.Config{})
	assert.Equal(t, adaptive.DefaultConfig(), l.Config())
	assert.Equal(t, adaptive.Config{
		Algorithm: adaptive.Vegas, InitialLimit: 20, MinLimit: 1, MaxLimit: 1000, Alpha: 1, Beta: 2,
		BackoffRatio: 0.9, Timeout: 5 * time.Second, MaxWaitDuration: time.Second,
		Tolerance: 1.5, Smoothing: 0.2, QueueSize: 4, LongWindow: 600,
		ProbeInterval: time.Minute, ProbeLimit: 3, ProbeSamples: 50,
	}, l.Config())
	assert.Equal(t, adaptive.Metrics{Limit: 20}, l.Metrics())
	assert.Equal(t, "dependency", l.Name())
	assert.Equal(t, "VEGAS", adaptive.Vegas.String())
	assert.Equal(t, "AIMD", adaptive.AIMD.String())
	assert.Equal(t, "GRADIENT2", adaptive.Gradient2.String())
}

// A refusal is a levee rejection: a breaker around the limiter does not record it and a retry
// does not retry it.
func TestRejectionIsALeveeRejection(t *testing.T) {
	l := newLimiter(t, adaptive.Config{InitialLimit: 1, MinLimit: 1})
	held, err := l.Acquire(context.Background())
	require.NoError(t, err)
	_, err = l.Acquire(context.Background())
	var le *adaptive.LimitExceededError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "dependency", le.Name)
	assert.ErrorIs(t, err, adaptive.ErrLimitExceeded)
	assert.True(t, levee.IsRejection(err))
	assert.True(t, levee.IsRejection(adaptive.ErrLimitExceeded))
	assert.EqualError(t, err, "adaptive: Limiter 'dependency' has reached its concurrency limit and does not permit further calls")

	cb := levee.Must(circuitbreaker.New("cb", circuitbreaker.Config{}))
	r := levee.Must(retry.New("r", retry.Config{MaxAttempts: 3}))
	p := levee.Compose[int]().With(adaptive.Decorator[int](l)).WithCircuitBreaker(cb).WithRetry(r)
	calls := 0
	_, err = p.Execute(context.Background(), func(context.Context) (int, error) { calls++; return 1, nil })
	assert.ErrorIs(t, err, adaptive.ErrLimitExceeded)
	assert.Zero(t, calls)
	assert.Equal(t, 0, cb.Metrics().NumberOfBufferedCalls, "not recorded")
	assert.Equal(t, int64(1), r.Metrics().NumberOfFailedCallsWithoutRetryAttempt, "not retried")
	assert.Equal(t, uint64(2), l.Metrics().Rejected)

	held.OnSuccess()
	v, err := p.Execute(context.Background(), func(context.Context) (int, error) { calls++; return 7, nil })
	assert.NoError(t, err)
	assert.Equal(t, 7, v)
	assert.Equal(t, 1, calls)
}

func TestQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLimiter(t, adaptive.Config{InitialLimit: 1, MaxLimit: 1, MaxQueued: 2, MaxWaitDuration: 50 * time.Millisecond})
		var events []string
		defer l.Subscribe(func(e adaptive.Event) { events = append(events, e.Type.String()) })()
		held := acquire(t, l)
		var order []int
		var wg sync.WaitGroup
		for i := 1; i <= 2; i++ {
			wg.Go(func() {
				p, err := l.Acquire(context.Background())
				if assert.NoError(t, err) {
					order = append(order, i)
					p.OnIgnore()
				}
			})
			synctest.Wait()
		}
		assert.Equal(t, 2, l.Metrics().Queued)
		_, err := l.Acquire(context.Background()) // the queue is full
		assert.ErrorIs(t, err, adaptive.ErrLimitExceeded)
		time.Sleep(10 * time.Millisecond)
		held.OnIgnore()
		wg.Wait()
		assert.Equal(t, []int{1, 2}, order, "first come, first served")
		assert.Equal(t, []string{"CALL_PERMITTED", "CALL_REJECTED", "CALL_PERMITTED", "CALL_PERMITTED"}, events)

		// A wait longer than MaxWaitDuration is refused.
		held = acquire(t, l)
		start := time.Now()
		_, err = l.Acquire(context.Background())
		assert.ErrorIs(t, err, adaptive.ErrLimitExceeded)
		assert.Equal(t, 50*time.Millisecond, time.Since(start))

		// A caller whose context ends while it waits gets the context's error.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		_, err = l.Acquire(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		cancelled, cancel2 := context.WithCancel(context.Background())
		cancel2()
		_, err = l.Acquire(cancelled)
		assert.ErrorIs(t, err, context.Canceled)
		held.OnIgnore()
		assert.Equal(t, adaptive.Metrics{Limit: 1, Permitted: 4, Rejected: 4}, l.Metrics())
	})
}

// Execute teaches the limiter from the outcome: a deadline is a drop, the caller's own
// cancellation, an inner rejection and a panic teach nothing, anything else is a latency.
func TestExecuteClassifiesOutcomes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLimiter(t, adaptive.Config{Algorithm: adaptive.AIMD, InitialLimit: 2, MaxLimit: 100})
		run := func(ctx context.Context, err error) error {
			_, got := adaptive.Execute(ctx, l, func(context.Context) (int, error) {
				time.Sleep(time.Millisecond)
				return 0, err
			})
			return got
		}
		estimate := func() float64 { return l.AlgorithmMetrics().Estimate }
		assert.NoError(t, run(context.Background(), nil)) // 1 in flight of 2: grows by 1/2
		assert.Equal(t, 2.5, estimate())
		boom := errors.New("boom")
		assert.Equal(t, boom, run(context.Background(), boom)) // an ordinary failure: a latency
		assert.InDelta(t, 2.9, estimate(), 1e-9, "1 in flight of 2: grows by 1/2.5")
		assert.ErrorIs(t, run(context.Background(), fmt.Errorf("call: %w", context.DeadlineExceeded)), context.DeadlineExceeded)
		assert.InDelta(t, 2.61, estimate(), 1e-9, "2.9 × 0.9: a drop")
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		assert.ErrorIs(t, run(ctx, context.Canceled), context.Canceled)
		assert.ErrorIs(t, run(context.Background(), adaptive.ErrLimitExceeded), adaptive.ErrLimitExceeded)
		_, err := adaptive.Execute(context.Background(), l, func(context.Context) (int, error) { panic("oops") })
		var pe *levee.PanicError
		assert.ErrorAs(t, err, &pe)
		assert.InDelta(t, 2.61, estimate(), 1e-9, "the cancellation, the inner rejection and the panic teach nothing")
		assert.Equal(t, adaptive.Metrics{Limit: 2, Permitted: 5, Rejected: 1, Dropped: 1, NoLoadLatency: time.Millisecond}, l.Metrics())
	})
}

func TestNil(t *testing.T) {
	var l *adaptive.Limiter
	_, err := adaptive.Execute(context.Background(), l, func(context.Context) (int, error) { return 1, nil })
	assert.Equal(t, adaptive.ErrNilLimiter, err)
	_, err = l.Acquire(context.Background())
	assert.Equal(t, adaptive.ErrNilLimiter, err)
	assert.Nil(t, adaptive.Decorator[int](nil))
	assert.Equal(t, adaptive.Metrics{}, l.Metrics())
	assert.Equal(t, adaptive.Config{}, l.Config())
	assert.Equal(t, "", l.Name())
	l.Subscribe(func(adaptive.Event) {})()
	var p adaptive.Permit
	p.OnSuccess()
	p.Record(nil)

	l = newLimiter(t, adaptive.Config{})
	_, err = adaptive.Execute[int](context.Background(), l, nil)
	assert.Equal(t, levee.ErrNilCall, err)
	assert.Equal(t, adaptive.Metrics{Limit: 20}, l.Metrics())
}

func TestEventTypes(t *testing.T) {
	assert.Equal(t, "LIMIT_CHANGED", adaptive.EventLimitChanged.String())
	assert.Equal(t, "EventType(9)", adaptive.EventType(9).String())
}

func TestAllocations(t *testing.T) {
	l := newLimiter(t, adaptive.Config{InitialLimit: 1, MaxLimit: 1})
	ctx := context.Background()
	n := 0
	call := func(context.Context) (int, error) { n++; return n, nil }
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		if _, err := adaptive.Execute(ctx, l, call); err != nil {
			t.Fatal(err)
		}
	}), "success")
	held := acquire(t, l)
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		if _, err := adaptive.Execute(ctx, l, call); err == nil {
			t.Fatal("admitted")
		}
	}), "rejection")
	held.OnSuccess()
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		p, err := l.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p.Record(nil)
	}), "permit API")
}
