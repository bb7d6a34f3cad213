package levee_test

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
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

var errBackend = errors.New("backend down")

// backend counts its invocations and fails while failing is set.
type backend struct {
	calls   atomic.Int64
	failing atomic.Bool
}

func (b *backend) call(ctx context.Context) (string, error) {
	b.calls.Add(1)
	if b.failing.Load() {
		return "", errBackend
	}
	return "ok", nil
}

func newBreaker(t *testing.T, window int) *circuitbreaker.CircuitBreaker {
	t.Helper()
	cb, err := circuitbreaker.New("cb", circuitbreaker.Config{SlidingWindowSize: window, MinimumNumberOfCalls: window})
	require.NoError(t, err)
	return cb
}

func newRetry(t *testing.T, attempts int, cfg retry.Config) *retry.Retry {
	t.Helper()
	cfg.MaxAttempts = attempts
	if cfg.WaitDuration == 0 && cfg.IntervalFunction == nil {
		cfg.WaitDuration = time.Millisecond
	}
	r, err := retry.New("retry", cfg)
	require.NoError(t, err)
	return r
}

func newFallback(t *testing.T, answer string) *fallback.Fallback[string] {
	t.Helper()
	f, err := fallback.New("fb", fallback.OnAny(fallback.Value(answer)))
	require.NoError(t, err)
	return f
}

// The last With... is outermost: Retry(CircuitBreaker(call)) records one outcome per attempt,
// CircuitBreaker(Retry(call)) one per request (the "metrics inflation" scenario).
func TestCompositionOrderDecidesWhatTheBreakerRecords(t *testing.T) {
	for _, tc := range []struct {
		name         string
		build        func(cb *circuitbreaker.CircuitBreaker, r *retry.Retry) *levee.Pipeline[string]
		wantCalls    int64
		wantRecorded int
	}{
		{"Retry(CircuitBreaker)", func(cb *circuitbreaker.CircuitBreaker, r *retry.Retry) *levee.Pipeline[string] {
			return levee.Compose[string]().WithCircuitBreaker(cb).WithRetry(r)
		}, 3, 3},
		{"CircuitBreaker(Retry)", func(cb *circuitbreaker.CircuitBreaker, r *retry.Retry) *levee.Pipeline[string] {
			return levee.Compose[string]().WithRetry(r).WithCircuitBreaker(cb)
		}, 3, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := &backend{}
				b.failing.Store(true)
				cb := newBreaker(t, 10)
				p := tc.build(cb, newRetry(t, 3, retry.Config{}))
				_, err := p.Execute(context.Background(), b.call)
				require.ErrorIs(t, err, errBackend)
				assert.Equal(t, tc.wantCalls, b.calls.Load())
				assert.Equal(t, tc.wantRecorded, cb.Metrics().NumberOfFailedCalls)
			})
		})
	}
}

// The scenario: "Fallback outermost: three backend calls, then the fallback. Fallback inside the retry:
// one backend call." The explicit builder keeps the order written.
func TestFallbackPositionDecidesWhetherRetryRuns(t *testing.T) {
	for _, tc := range []struct {
		name      string
		build     func(r *retry.Retry, f *fallback.Fallback[string]) *levee.Pipeline[string]
		wantCalls int64
	}{
		{"Fallback(Retry)", func(r *retry.Retry, f *fallback.Fallback[string]) *levee.Pipeline[string] {
			return levee.Compose[string]().WithRetry(r).WithFallback(f)
		}, 3},
		{"Retry(Fallback)", func(r *retry.Retry, f *fallback.Fallback[string]) *levee.Pipeline[string] {
			return levee.Compose[string]().WithFallback(f).WithRetry(r)
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := &backend{}
				b.failing.Store(true)
				p := tc.build(newRetry(t, 3, retry.Config{}), newFallback(t, "stale"))
				v, out, err := p.ExecuteOutcome(context.Background(), b.call)
				require.NoError(t, err)
				assert.Equal(t, "stale", v)
				assert.True(t, out.Fallback)
				assert.ErrorIs(t, out.Cause, errBackend)
				assert.Equal(t, tc.wantCalls, b.calls.Load())
			})
		})
	}
}

func TestOutcomeOfALiveAnswer(t *testing.T) {
	b := &backend{}
	p := levee.DefaultPipeline(levee.Patterns{}, newFallback(t, "stale"))
	v, out, err := p.ExecuteOutcome(context.Background(), b.call)
	require.NoError(t, err)
	assert.Equal(t, "ok", v)
	assert.Equal(t, fallback.Outcome{}, out)
}

// DefaultPipeline is Fallback(Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(call)))))):
// every attempt takes a rate-limiter permission, is recorded by the breaker, gets its own
// deadline, and holds the bulkhead only while it runs.
func TestDefaultPipelineOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bh, err := bulkhead.New("bh", bulkhead.Config{MaxConcurrentCalls: 1})
		require.NoError(t, err)
		var freeDuringWaits []int
		interval := func(attempt int) time.Duration {
			freeDuringWaits = append(freeDuringWaits, bh.Metrics().AvailableConcurrentCalls)
			return 10 * time.Millisecond
		}
		rt := newRetry(t, 3, retry.Config{IntervalFunction: interval})
		rl, err := ratelimiter.New("rl", ratelimiter.Config{LimitForPeriod: 100, LimitRefreshPeriod: time.Hour})
		require.NoError(t, err)
		tl, err := timelimiter.New("tl", timelimiter.Config{TimeoutDuration: 50 * time.Millisecond})
		require.NoError(t, err)
		cb := newBreaker(t, 10)

		var deadlines []time.Duration
		var failNow atomic.Bool
		call := func(ctx context.Context) (string, error) {
			if failNow.Load() {
				return "", errBackend
			}
			start := time.Now()
			<-ctx.Done() // hangs until its own deadline
			deadlines = append(deadlines, time.Since(start))
			return "", ctx.Err()
		}
		p := levee.DefaultPipeline(levee.Patterns{Retry: rt, CircuitBreaker: cb, RateLimiter: rl, TimeLimiter: tl, Bulkhead: bh}, newFallback(t, "pending"))

		// A hanging dependency: each attempt ends at its own deadline.
		start := time.Now()
		v, out, err := p.ExecuteOutcome(context.Background(), call)
		synctest.Wait()
		require.NoError(t, err)
		assert.Equal(t, "pending", v)
		assert.True(t, out.Fallback)
		assert.ErrorIs(t, out.Cause, timelimiter.ErrTimeout)
		assert.Equal(t, 3*50*time.Millisecond+2*10*time.Millisecond, time.Since(start))
		assert.Equal(t, []time.Duration{50 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond}, deadlines)

		// A failing dependency: the bulkhead is free while the retry waits.
		freeDuringWaits = nil
		failNow.Store(true)
		_, out, err = p.ExecuteOutcome(context.Background(), call)
		require.NoError(t, err)
		assert.True(t, out.Fallback)
		assert.ErrorIs(t, out.Cause, errBackend)
		assert.Equal(t, []int{1, 1}, freeDuringWaits, "bulkhead innermost: free while the retry waits")
		assert.Equal(t, 100-6, rl.Metrics().AvailablePermissions, "one permission per attempt")
		assert.Equal(t, 6, cb.Metrics().NumberOfFailedCalls, "one breaker outcome per attempt")
		assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)
	})
}

// A fallback that answers inside a time limiter is reported, and never after a timeout.
func TestOutcomeThroughTimeLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl, err := timelimiter.New("tl", timelimiter.Config{TimeoutDuration: time.Second})
		require.NoError(t, err)
		b := &backend{}
		b.failing.Store(true)
		p := levee.Compose[string]().WithFallback(newFallback(t, "stale")).WithTimeLimiter(tl)
		v, out, err := p.ExecuteOutcome(context.Background(), b.call)
		require.NoError(t, err)
		assert.Equal(t, "stale", v)
		assert.True(t, out.Fallback)

		slow := func(ctx context.Context) (string, error) {
			time.Sleep(2 * time.Second) // ignores its context
			return "", errBackend
		}
		v, out, err = p.ExecuteOutcome(context.Background(), slow)
		require.ErrorIs(t, err, timelimiter.ErrTimeout)
		assert.Equal(t, "", v)
		assert.False(t, out.Fallback)
		time.Sleep(2 * time.Second)
		synctest.Wait()
	})
}

// Retry(Fallback(call)): a retry that answers live after a fallback's answer was retried on its
// result reports a live answer, not the earlier attempt's fallback.
func TestOutcomeIsResetForEachRetryAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := newRetry(t, 3, retry.Config{RetryOnResultPredicate: func(v any) bool { return v == "stale" }})
		p := levee.Compose[string]().WithFallback(newFallback(t, "stale")).WithRetry(rt)
		b := &backend{}
		b.failing.Store(true)
		v, out, err := p.ExecuteOutcome(context.Background(), func(ctx context.Context) (string, error) {
			defer b.failing.Store(false) // only the first attempt fails
			return b.call(ctx)
		})
		require.NoError(t, err)
		assert.Equal(t, "ok", v)
		assert.Equal(t, fallback.Outcome{}, out, "the live answer of the second attempt")
		assert.Equal(t, int64(2), b.calls.Load())
	})
}

func TestPanicBecomesAnErrorAndReleasesPermits(t *testing.T) {
	bh, err := bulkhead.New("bh", bulkhead.Config{MaxConcurrentCalls: 1})
	require.NoError(t, err)
	cb := newBreaker(t, 10)
	p := levee.Compose[string]().WithBulkhead(bh).WithCircuitBreaker(cb)
	_, err = p.Execute(context.Background(), func(context.Context) (string, error) { panic("boom") })
	var pe *levee.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "boom", pe.Value)
	assert.Equal(t, 1, cb.Metrics().NumberOfFailedCalls)
	assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)

	// With no pattern at all the panic is still an error.
	_, err = levee.Compose[string]().Execute(context.Background(), func(context.Context) (string, error) { panic("bare") })
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "bare", pe.Value)
}

func TestNilInputs(t *testing.T) {
	var nilPipeline *levee.Pipeline[string]
	b := &backend{}
	v, err := nilPipeline.Execute(nil, b.call) //nolint:staticcheck // a nil ctx is tolerated on purpose
	require.NoError(t, err)
	assert.Equal(t, "ok", v)

	v, out, err := nilPipeline.ExecuteOutcome(context.Background(), b.call)
	require.NoError(t, err)
	assert.Equal(t, "ok", v)
	assert.Equal(t, fallback.Outcome{}, out)
	_, err = nilPipeline.Execute(context.Background(), nil)
	assert.ErrorIs(t, err, levee.ErrNilCall)

	// A nil call is refused without reaching any pattern.
	cb := newBreaker(t, 10)
	guarded := levee.Compose[string]().WithCircuitBreaker(cb).WithFallback(newFallback(t, "stale"))
	_, err = levee.Compose[string]().Execute(context.Background(), nil)
	assert.ErrorIs(t, err, levee.ErrNilCall)
	v, out, err = guarded.ExecuteOutcome(context.Background(), nil)
	assert.ErrorIs(t, err, levee.ErrNilCall)
	assert.Equal(t, "", v)
	assert.Equal(t, fallback.Outcome{}, out, "a nil call is a mistake, not a failure to answer")
	assert.Equal(t, 0, cb.Metrics().NumberOfBufferedCalls)

	// Nil patterns are skipped, so a Patterns value with gaps works.
	p := levee.Compose[string]().WithBulkhead(nil).WithTimeLimiter(nil).WithRateLimiter(nil).
		WithCircuitBreaker(nil).WithRetry(nil).WithFallback(nil)
	v, err = p.Execute(context.Background(), b.call)
	require.NoError(t, err)
	assert.Equal(t, "ok", v)
}

// A caller's own cancellation releases every permit and is recorded by no one.
func TestCallerCancellationReleasesEverything(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bh, err := bulkhead.New("bh", bulkhead.Config{MaxConcurrentCalls: 1})
		require.NoError(t, err)
		cb := newBreaker(t, 2)
		rt := newRetry(t, 3, retry.Config{})
		p := levee.DefaultPipeline(levee.Patterns{Retry: rt, CircuitBreaker: cb, Bulkhead: bh}, newFallback(t, "stale"))
		ctx, cancel := context.WithCancel(context.Background())
		var calls atomic.Int64
		go func() { time.Sleep(time.Second); cancel() }()
		_, out, err := p.ExecuteOutcome(ctx, func(ctx context.Context) (string, error) {
			calls.Add(1)
			<-ctx.Done()
			return "", ctx.Err()
		})
		require.ErrorIs(t, err, context.Canceled)
		assert.False(t, out.Fallback, "the caller has gone: no fallback answer")
		assert.Equal(t, int64(1), calls.Load(), "not retried")
		assert.Equal(t, 0, cb.Metrics().NumberOfBufferedCalls)
		assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)
	})
}

// A caller that cancels with a cause (context.WithCancelCause) and a call that returns
// context.Cause(ctx) is still the caller's own cancellation: not retried, not recorded, not
// answered, every permit released.
func TestCallerCancellationWithCauseReleasesEverything(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bh, err := bulkhead.New("bh", bulkhead.Config{MaxConcurrentCalls: 1})
		require.NoError(t, err)
		cb := newBreaker(t, 2)
		rt := newRetry(t, 3, retry.Config{})
		p := levee.DefaultPipeline(levee.Patterns{Retry: rt, CircuitBreaker: cb, Bulkhead: bh}, newFallback(t, "stale"))
		errGone := errors.New("client went away")
		ctx, cancel := context.WithCancelCause(context.Background())
		var calls atomic.Int64
		go func() { time.Sleep(time.Second); cancel(errGone) }()
		_, out, err := p.ExecuteOutcome(ctx, func(ctx context.Context) (string, error) {
			calls.Add(1)
			<-ctx.Done()
			return "", context.Cause(ctx)
		})
		require.ErrorIs(t, err, errGone)
		assert.False(t, out.Fallback, "the caller has gone: no fallback answer")
		assert.Equal(t, int64(1), calls.Load(), "not retried")
		assert.Equal(t, 0, cb.Metrics().NumberOfBufferedCalls)
		assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)
	})
}

func TestPipelinesAreImmutable(t *testing.T) {
	cb := newBreaker(t, 10)
	base := levee.Compose[string]().WithCircuitBreaker(cb)
	withFallback := base.WithFallback(newFallback(t, "stale"))
	b := &backend{}
	b.failing.Store(true)
	_, err := base.Execute(context.Background(), b.call)
	assert.ErrorIs(t, err, errBackend, "adding a fallback to a derived pipeline left base unchanged")
	v, err := withFallback.Execute(context.Background(), b.call)
	require.NoError(t, err)
	assert.Equal(t, "stale", v)
}

// The success path of Execute and ExecuteOutcome allocates nothing, whatever the pipeline holds
// short of a time limiter, when the call is a function value made once.
func TestSuccessPathAllocatesNothing(t *testing.T) {
	rt := newRetry(t, 3, retry.Config{})
	cb := newBreaker(t, 100)
	rl, err := ratelimiter.New("rl", ratelimiter.Config{LimitForPeriod: 1 << 20, LimitRefreshPeriod: time.Second, TimeoutDuration: ratelimiter.NoWait})
	require.NoError(t, err)
	bh, err := bulkhead.New("bh", bulkhead.DefaultConfig())
	require.NoError(t, err)
	p := levee.DefaultPipeline(levee.Patterns{Retry: rt, CircuitBreaker: cb, RateLimiter: rl, Bulkhead: bh}, newFallback(t, "stale"))
	b := &backend{}
	call := b.call // a method value, made once
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = p.Execute(ctx, call) }))
	assert.Zero(t, testing.AllocsPerRun(1000, func() { _, _, _ = p.ExecuteOutcome(ctx, call) }))
	assert.Equal(t, int64(2002), b.calls.Load(), "each run is one call: AllocsPerRun runs once more to warm up")
}

// Whatever pattern is innermost, a panic in the call comes back as a *PanicError: the
// pipeline relies on each pattern's Execute to guard the call.
func TestPanicIsAnErrorWhateverTheInnermostPattern(t *testing.T) {
	bh, err := bulkhead.New("bh", bulkhead.DefaultConfig())
	require.NoError(t, err)
	rl, err := ratelimiter.New("rl", ratelimiter.Config{LimitForPeriod: 100, LimitRefreshPeriod: time.Hour})
	require.NoError(t, err)
	tl, err := timelimiter.New("tl", timelimiter.DefaultConfig())
	require.NoError(t, err)
	catchAll, err := fallback.New("fb", fallback.OnAny(func(ctx context.Context, err error) (string, error) {
		var pe *levee.PanicError
		if errors.As(err, &pe) {
			return "recovered", nil
		}
		return "", err
	}))
	require.NoError(t, err)
	boom := func(context.Context) (string, error) { panic("boom") }
	for name, p := range map[string]*levee.Pipeline[string]{
		"bulkhead":       levee.Compose[string]().WithBulkhead(bh),
		"ratelimiter":    levee.Compose[string]().WithRateLimiter(rl),
		"timelimiter":    levee.Compose[string]().WithTimeLimiter(tl),
		"circuitbreaker": levee.Compose[string]().WithCircuitBreaker(newBreaker(t, 10)),
		"retry":          levee.Compose[string]().WithRetry(newRetry(t, 1, retry.Config{})),
	} {
		_, err := p.Execute(context.Background(), boom)
		var pe *levee.PanicError
		require.ErrorAs(t, err, &pe, name)
		assert.Equal(t, "boom", pe.Value, name)
	}
	v, out, err := levee.Compose[string]().WithFallback(catchAll).ExecuteOutcome(context.Background(), boom)
	require.NoError(t, err)
	assert.Equal(t, "recovered", v)
	assert.True(t, out.Fallback)
}

// The zero Pipeline guards nothing, as a nil one, and builds on as an empty one.
func TestZeroPipelineGuardsNothing(t *testing.T) {
	var p levee.Pipeline[string]
	v, err := p.Execute(context.Background(), func(context.Context) (string, error) { return "ok", nil })
	require.NoError(t, err)
	assert.Equal(t, "ok", v)
	_, err = p.Execute(context.Background(), func(context.Context) (string, error) { panic("boom") })
	var pe *levee.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "boom", pe.Value)

	fb, err := fallback.New("fb", fallback.OnAny(fallback.Value("stale")))
	require.NoError(t, err)
	v, out, err := p.WithFallback(fb).ExecuteOutcome(context.Background(), func(context.Context) (string, error) {
		return "", errors.New("down")
	})
	require.NoError(t, err)
	assert.Equal(t, "stale", v)
	assert.True(t, out.Fallback)
}
