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

	"github.com/levee-go/levee/operators"
	"github.com/levee-go/levee/timelimiter"
)

// timed emits i after waiting gaps[i], for each i, then completes; it counts cancellations.
func timed(cancelled *atomic.Int32, gaps ...time.Duration) rxgo.Observable {
	return rxgo.Defer([]rxgo.Producer{func(ctx context.Context, next chan<- rxgo.Item) {
		for i, g := range gaps {
			select {
			case <-time.After(g):
			case <-ctx.Done():
				cancelled.Add(1)
				return
			}
			if !rxgo.Of(i).SendContext(ctx, next) {
				cancelled.Add(1)
				return
			}
		}
	}})
}

func limit(t *testing.T, tl *timelimiter.TimeLimiter, b operators.TimeBound) operators.Operator {
	t.Helper()
	op, err := operators.TimeLimiter(tl, b)
	require.NoError(t, err)
	return op
}

// Resilience4j: a TimeLimiter on a Flux bounds each item, not the whole stream.
func TestTimeLimiterOnFluxIsPerItem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTimeLimiter(t, time.Second)
		var c atomic.Int32
		got, _ := observe(limit(t, tl, 0)(timed(&c, 900*time.Millisecond, 900*time.Millisecond, 900*time.Millisecond)))
		assert.Equal(t, []string{"0", "1", "2"}, got, "2.7s in all, each item within 1s")
		m := tl.Metrics()
		assert.Equal(t, int64(1), m.NumberOfSuccessfulCalls, "one outcome per subscription")
		assert.Equal(t, int64(0), m.NumberOfTimedOutCalls)
	})
}

func TestTimeLimiterFirstElementTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTimeLimiter(t, time.Second)
		var c atomic.Int32
		start := time.Now()
		got, items := observe(limit(t, tl, operators.BoundFirstElement)(timed(&c, 2*time.Second, 0)))
		assert.Equal(t, []string{"E:timelimiter: TimeLimiter 'tl' recorded a timeout exception"}, got)
		assert.Equal(t, time.Second, time.Since(start))
		assert.ErrorIs(t, items[0].E, timelimiter.ErrTimeout)
		assert.ErrorIs(t, items[0].E, context.DeadlineExceeded)
		var te *timelimiter.TimeoutError
		require.ErrorAs(t, items[0].E, &te)
		assert.Equal(t, time.Second, te.Timeout)
		synctest.Wait()
		assert.Equal(t, int32(1), c.Load(), "the upstream was cancelled at the limit")
		assert.Equal(t, int64(1), tl.Metrics().NumberOfTimedOutCalls)

		got, _ = observe(limit(t, tl, operators.BoundFirstElement)(timed(&c, 0, 5*time.Second)))
		assert.Equal(t, []string{"0", "1"}, got, "only the first element is bounded")
	})
}

func TestTimeLimiterGapTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTimeLimiter(t, time.Second)
		var c atomic.Int32
		start := time.Now()
		got, _ := observe(limit(t, tl, 0)(timed(&c, 500*time.Millisecond, 500*time.Millisecond, 3*time.Second)))
		assert.Equal(t, []string{"0", "1", "E:timelimiter: TimeLimiter 'tl' recorded a timeout exception"}, got)
		assert.Equal(t, 2*time.Second, time.Since(start))

		start = time.Now()
		got, _ = observe(limit(t, tl, operators.BoundGap)(timed(&c, 5*time.Second, 1500*time.Millisecond)))
		assert.Equal(t, []string{"0", "E:timelimiter: TimeLimiter 'tl' recorded a timeout exception"}, got,
			"the first element is not bounded")
		assert.Equal(t, 6*time.Second, time.Since(start))
	})
}

func TestTimeLimiterBoundsTheEndToo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTimeLimiter(t, time.Second)
		up := rxgo.Defer([]rxgo.Producer{func(ctx context.Context, next chan<- rxgo.Item) {
			rxgo.Of(0).SendContext(ctx, next)
			select { // completes late
			case <-time.After(5 * time.Second):
			case <-ctx.Done():
			}
		}})
		got, _ := observe(limit(t, tl, 0)(up))
		assert.Equal(t, []string{"0", "E:timelimiter: TimeLimiter 'tl' recorded a timeout exception"}, got)
	})
}

func TestTimeLimiterSlowConsumerIsNotASlowUpstream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTimeLimiter(t, time.Second)
		ch := limit(t, tl, 0)(rxgo.Just(1, 2, 3)()).Observe()
		var got []string
		for it := range ch {
			got = append(got, show(it))
			time.Sleep(5 * time.Second)
		}
		assert.Equal(t, []string{"1", "2", "3"}, got)
		assert.Equal(t, int64(1), tl.Metrics().NumberOfSuccessfulCalls)
	})
}

func TestTimeLimiterBoundStreamCountsTheConsumerToo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTimeLimiter(t, time.Second)
		ch := limit(t, tl, operators.BoundStream)(rxgo.Just(1, 2, 3)()).Observe()
		start := time.Now()
		var got []string
		for it := range ch {
			got = append(got, show(it))
			time.Sleep(600 * time.Millisecond)
		}
		assert.Equal(t, []string{"1", "2", "E:timelimiter: TimeLimiter 'tl' recorded a timeout exception"}, got)
		assert.Equal(t, 1800*time.Millisecond, time.Since(start), "the timeout came at 1s, while 2 waited for the consumer")
	})
}

func TestTimeLimiterRecordsAnUpstreamErrorAndASuccessOnCancelAfterAnItem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTimeLimiter(t, time.Second)
		got, _ := observe(limit(t, tl, 0)(newProbe(1, errBoom, 3).Observable()))
		assert.Equal(t, []string{"1", "E:boom"}, got)
		assert.Equal(t, int64(1), tl.Metrics().NumberOfFailedCalls)

		p := newProbe(1)
		p.hang = true
		assert.Equal(t, []string{"1"}, take(limit(t, tl, 0)(p.Observable()), 1))
		m := tl.Metrics()
		assert.Equal(t, int64(1), m.NumberOfSuccessfulCalls, "cancelled after an item, as CircuitBreaker")
		assert.Equal(t, int64(1), m.NumberOfFailedCalls)
		assert.Equal(t, int64(0), m.NumberOfTimedOutCalls)
	})
}

// The time limiter classified the upstream's error item with errors.Is, running its Is
// method in rxgo's goroutine: one that panicked killed the process.
func TestTimeLimiterSurvivesAnUpstreamErrorWhoseIsPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTimeLimiter(t, time.Second)
		var items []rxgo.Item
		for it := range limit(t, tl, 0)(newProbe(1, panickyIsError{}).Observable()).Observe() {
			items = append(items, it)
		}
		require.Len(t, items, 2)
		assert.Equal(t, 1, items[0].V)
		assert.Equal(t, panickyIsError{}, items[1].E)
		assert.Equal(t, int64(1), tl.Metrics().NumberOfFailedCalls)
	})
}

func TestTimeLimiterRefusesUnknownBounds(t *testing.T) {
	tl := newTimeLimiter(t, time.Second)
	op, err := operators.TimeLimiter(tl, 8)
	assert.Nil(t, op)
	assert.EqualError(t, err, "operators: TimeLimiter bounds must be a combination of BoundFirstElement, BoundGap and BoundStream, got 8")
	_, items := observe(limit(t, nil, 0)(rxgo.Just(1)()))
	require.Len(t, items, 1)
	assert.ErrorIs(t, items[0].E, timelimiter.ErrNilTimeLimiter)
}

// An error the upstream emitted before its consumer cancelled is recorded as ERROR, however
// soon after it the consumer left; an error that is the consumer's own cancellation is not.
func TestTimeLimiterRecordsAnErrorEmittedBeforeTheConsumerCancelled(t *testing.T) {
	for _, tc := range []struct {
		name        string
		cancelFirst bool // the consumer cancels, then the upstream emits context.Canceled
		want        timelimiter.Metrics
	}{
		{"error then cancel", false, timelimiter.Metrics{NumberOfFailedCalls: 200}},
		{"cancel then its error", true, timelimiter.Metrics{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tl := newTimeLimiter(t, time.Second)
				for range 200 {
					ctx, cancel := context.WithCancel(context.Background())
					up := rxgo.Defer([]rxgo.Producer{func(_ context.Context, next chan<- rxgo.Item) {
						if tc.cancelFirst {
							cancel()
							select { // the operator may have left already
							case next <- rxgo.Error(context.Canceled):
							case <-time.After(time.Second):
							}
							return
						}
						next <- rxgo.Error(errBoom)
						cancel()
					}})
					for range limit(t, tl, 0)(up).Observe(rxgo.WithContext(ctx)) {
					}
					synctest.Wait()
					require.Equal(t, context.Canceled, ctx.Err(), "the consumer cancelled")
				}
				time.Sleep(time.Second) // producers whose item nobody took give up
				synctest.Wait()
				assert.Equal(t, tc.want, tl.Metrics())
			})
		})
	}
}
