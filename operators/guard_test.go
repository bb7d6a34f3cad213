package operators_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/operators"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
)

func mustGuard(t *testing.T) func(rxgo.Observable, error) rxgo.Observable {
	return func(obs rxgo.Observable, err error) rxgo.Observable {
		t.Helper()
		require.NoError(t, err)
		return obs
	}
}

func TestGuardRunsEachAttemptThroughEveryPattern(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ps := levee.Patterns{
			Retry:          newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: time.Second}),
			CircuitBreaker: newBreaker(t, circuitbreaker.Config{}),
			RateLimiter:    newRateLimiter(t, ratelimiter.Config{LimitForPeriod: 10, LimitRefreshPeriod: time.Hour, TimeoutDuration: ratelimiter.NoWait}),
			TimeLimiter:    newTimeLimiter(t, time.Second),
			Bulkhead:       newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1}),
		}
		var builds atomic.Int32
		src := func(ctx context.Context) (rxgo.Observable, error) {
			switch builds.Add(1) {
			case 1:
				return nil, errBoom // failing to build the stream is a failed attempt
			case 2:
				return newProbe("a", errBoom).Observable(), nil
			}
			return newProbe("a", "b").Observable(), nil
		}
		got, _ := observe(mustGuard(t)(operators.Guard(ps, nil, src)))
		assert.Equal(t, []string{"a", "a", "b"}, got)
		assert.Equal(t, int32(3), builds.Load())

		cm := ps.CircuitBreaker.Metrics()
		assert.Equal(t, 3, cm.NumberOfBufferedCalls, "one breaker call per attempt")
		assert.Equal(t, 2, cm.NumberOfFailedCalls)
		assert.Equal(t, 7, ps.RateLimiter.Metrics().AvailablePermissions, "one permission per attempt")
		tm := ps.TimeLimiter.Metrics()
		assert.Equal(t, int64(2), tm.NumberOfFailedCalls)
		assert.Equal(t, int64(1), tm.NumberOfSuccessfulCalls)
		assert.Equal(t, 1, ps.Bulkhead.Metrics().AvailableConcurrentCalls)
		assert.Equal(t, int64(1), ps.Retry.Metrics().NumberOfSuccessfulCallsWithRetryAttempt)
	})
}

// The Reactor pitfall of the composition article, "A Mono method that throws before returning the Mono: the
// fallback is skipped", cannot happen: the stream is built inside the guarded execution.
func TestMonoMethodThatThrowsBeforeReturningStillReachesTheFallback(t *testing.T) {
	for name, src := range map[string]operators.Source{
		"error": func(context.Context) (rxgo.Observable, error) { return nil, errBoom },
		"panic": func(context.Context) (rxgo.Observable, error) { panic("thrown while building") },
	} {
		t.Run(name, func(t *testing.T) {
			cb := newBreaker(t, circuitbreaker.Config{})
			var cause error
			fb := newStreamFallback(t, fallback.OnAny(func(_ context.Context, err error) (rxgo.Observable, error) {
				cause = err
				return rxgo.Just("cached")(), nil
			}))
			got, _ := observe(mustGuard(t)(operators.Guard(levee.Patterns{CircuitBreaker: cb}, fb, src)))
			assert.Equal(t, []string{"cached"}, got)
			assert.Equal(t, 1, cb.Metrics().NumberOfFailedCalls, "the breaker recorded the failure to build")
			if name == "panic" {
				var pe *levee.PanicError
				assert.ErrorAs(t, cause, &pe)
			} else {
				assert.Same(t, errBoom, cause)
			}
		})
	}
}

func TestGuardFallbackAnswersOnceTheRetriesAreExhausted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := newRetry(t, retry.Config{MaxAttempts: 2, WaitDuration: retry.NoWait})
		fb := newStreamFallback(t, fallback.OnType(func(_ context.Context, err *retry.MaxRetriesExceededError) (rxgo.Observable, error) {
			return rxgo.Just("cached")(), nil
		}))
		var builds atomic.Int32
		got, _ := observe(mustGuard(t)(operators.Guard(levee.Patterns{Retry: rt}, fb, flaky(&builds, 9))))
		assert.Equal(t, []string{"a1", "a2", "cached"}, got)
	})
}

func TestGuardOpenBreakerIsAnsweredWithoutBuildingOrRetrying(t *testing.T) {
	cb := newBreaker(t, circuitbreaker.Config{})
	require.NoError(t, cb.TransitionToForcedOpenState())
	rt := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
	fb := newStreamFallback(t, fallback.OnError(circuitbreaker.ErrCallNotPermitted, answer(rxgo.Just("cached")())))
	var builds atomic.Int32
	got, _ := observe(mustGuard(t)(operators.Guard(levee.Patterns{Retry: rt, CircuitBreaker: cb}, fb, flaky(&builds, 0))))
	assert.Equal(t, []string{"cached"}, got)
	assert.Equal(t, int32(0), builds.Load())
	assert.Equal(t, int64(1), rt.Metrics().NumberOfTotalCalls)
}

// rxgo's pitfall under Guard: each attempt used to observe a Lazy of its own, which could not
// see that src handed out the same drained Create again, so the retry completed cleanly.
func TestGuardRetryOfASingleUseObservableIsRefusedNotCompleted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		once := rxgo.Create([]rxgo.Producer{func(_ context.Context, next chan<- rxgo.Item) {
			next <- rxgo.Of(1)
			next <- rxgo.Error(errBoom)
		}}, rxgo.WithContext(ctx))
		rt := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
		var builds atomic.Int32
		src := func(context.Context) (rxgo.Observable, error) {
			builds.Add(1)
			return once, nil
		}
		got, items := observe(mustGuard(t)(operators.Guard(levee.Patterns{Retry: rt}, nil, src)))
		require.Len(t, got, 2, "not a clean completion after the first item")
		assert.Equal(t, "1", got[0])
		assert.ErrorIs(t, items[1].E, operators.ErrSingleUse)
		assert.ErrorIs(t, items[1].E, errBoom, "the attempt's own error is kept")
		assert.Equal(t, int32(2), builds.Load(), "the refusal is not retried")
	})
}

func TestGuardTimeLimitOption(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTimeLimiter(t, time.Second)
		p := newProbe(1, 2, 3)
		p.gap = 400 * time.Millisecond
		got, _ := observe(mustGuard(t)(operators.Guard(levee.Patterns{TimeLimiter: tl}, nil, p.Source(nil),
			operators.TimeLimit(operators.BoundStream))))
		assert.Equal(t, []string{"1", "2", "E:timelimiter: TimeLimiter 'tl' recorded a timeout exception"}, got)
	})
}

func TestGuardRefusesInvalidArguments(t *testing.T) {
	src := newProbe(1).Source(nil)
	tl := newTimeLimiter(t, time.Second)
	tests := []struct {
		name string
		ps   levee.Patterns
		src  operators.Source
		opts []operators.Option
		want string
	}{
		{"nil source", levee.Patterns{}, nil, nil, levee.ErrNilCall.Error()},
		{"TimeLimit without a TimeLimiter", levee.Patterns{}, src, []operators.Option{operators.TimeLimit(operators.BoundGap)},
			"operators: TimeLimit needs a Patterns.TimeLimiter"},
		{"TimeLimit 0", levee.Patterns{TimeLimiter: tl}, src, []operators.Option{operators.TimeLimit(0)},
			"operators: TimeLimit must be a combination of BoundFirstElement, BoundGap and BoundStream, got 0"},
		{"TimeLimit unknown", levee.Patterns{TimeLimiter: tl}, src, []operators.Option{operators.TimeLimit(16)},
			"operators: TimeLimit must be a combination of BoundFirstElement, BoundGap and BoundStream, got 16"},
		{"per-emission option", levee.Patterns{}, src, []operators.Option{operators.Concurrency(2)},
			"operators: option Concurrency does not apply to Guard"},
		{"Buffer", levee.Patterns{}, src, []operators.Option{operators.Buffer(2)},
			"operators: option Buffer does not apply to Guard"},
		{"zero option", levee.Patterns{}, src, []operators.Option{{}}, "operators: option 0 of Guard is the zero Option"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs, err := operators.Guard(tt.ps, nil, tt.src, tt.opts...)
			assert.Nil(t, obs)
			assert.EqualError(t, err, tt.want)
		})
	}
}

// guarded returns the patterns of the cancellation tests: a breaker in HALF_OPEN with one
// probe, a bulkhead of one, a rate limiter of one per hour and a retry waiting an hour.
func cancellationPatterns(t *testing.T) levee.Patterns {
	return levee.Patterns{
		Retry:          newRetry(t, retry.Config{MaxAttempts: 2, WaitDuration: time.Hour}),
		CircuitBreaker: halfOpen(t),
		RateLimiter:    newRateLimiter(t, ratelimiter.Config{LimitForPeriod: 1, LimitRefreshPeriod: time.Hour, TimeoutDuration: 2 * time.Hour}),
		TimeLimiter:    newTimeLimiter(t, time.Hour),
		Bulkhead:       newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1, MaxWaitDuration: time.Hour}),
	}
}

func TestGuardCancelAtEveryStageReleasesEverything(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, ps levee.Patterns) (release func())
		items   []any // the source's items; it then waits for its context
		read    int   // items the consumer reads before it cancels
		builds  int32
		state   circuitbreaker.State
	}{
		{name: "waiting for the rate limiter", read: 0, builds: 0, state: circuitbreaker.HalfOpen,
			prepare: func(t *testing.T, ps levee.Patterns) func() {
				require.NoError(t, ps.RateLimiter.AcquirePermission(context.Background(), 1))
				return func() {}
			}},
		{name: "waiting for the bulkhead", read: 0, builds: 0, state: circuitbreaker.HalfOpen,
			prepare: func(t *testing.T, ps levee.Patterns) func() {
				require.NoError(t, ps.Bulkhead.Acquire(context.Background()))
				return ps.Bulkhead.Release
			}},
		{name: "before the first item", read: 0, builds: 1, state: circuitbreaker.HalfOpen},
		{name: "after an item", items: []any{1}, read: 1, builds: 1, state: circuitbreaker.Closed},
		{name: "waiting for a retry", items: []any{1, errBoom}, read: 1, builds: 1, state: circuitbreaker.Open},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ps := cancellationPatterns(t)
				release := func() {}
				if tt.prepare != nil {
					release = tt.prepare(t, ps)
				}
				p := newProbe(tt.items...)
				p.hang = true
				var builds atomic.Int32
				obs := mustGuard(t)(operators.Guard(ps, nil, p.Source(&builds)))
				ctx, cancel := context.WithCancel(context.Background())
				ch := obs.Observe(rxgo.WithContext(ctx))
				for range tt.read {
					<-ch
				}
				synctest.Wait()
				cancel()
				for it := range ch {
					t.Errorf("item after the cancellation: %s", show(it))
				}
				release()
				synctest.Wait()

				assert.Equal(t, tt.builds, builds.Load())
				assert.Equal(t, tt.state, ps.CircuitBreaker.State())
				if tt.state == circuitbreaker.HalfOpen {
					assert.NoError(t, tryAcquire(ps.CircuitBreaker), "the probe permit is back")
				}
				assert.Equal(t, 1, ps.Bulkhead.Metrics().AvailableConcurrentCalls)
				assert.Equal(t, 0, ps.Bulkhead.Metrics().NumberOfWaitingCalls)
				assert.Equal(t, 0, ps.RateLimiter.Metrics().NumberOfWaitingCalls)
				assert.GreaterOrEqual(t, ps.RateLimiter.Metrics().AvailablePermissions, 0, "no reservation left")
				assert.Equal(t, int64(0), ps.Retry.Metrics().NumberOfSuccessfulCallsWithoutRetryAttempt+
					ps.Retry.Metrics().NumberOfFailedCallsWithRetryAttempt, "a cancelled subscription has no retry outcome")
			})
		})
	}
}
