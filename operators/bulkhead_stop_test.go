package operators_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/operators"
	"github.com/levee-go/levee/retry"
)

// lingering builds an Observable that emits 0, 1, 2, ... one every gap until its context
// ends (or, with failAfter > 0, fails with errBoom after failAfter items), then keeps running
// for linger before its goroutine returns. sources counts the goroutines running, and most
// the highest count seen.
type lingering struct {
	gap, linger time.Duration
	failAfter   int
	*counts
}

type counts struct{ sources, most atomic.Int32 }

func newLingering(gap, linger time.Duration) *lingering {
	return &lingering{gap: gap, linger: linger, counts: new(counts)}
}

func (l *lingering) Source(context.Context) (rxgo.Observable, error) {
	return rxgo.Defer([]rxgo.Producer{func(ctx context.Context, next chan<- rxgo.Item) {
		n := l.sources.Add(1)
		for m := l.most.Load(); n > m && !l.most.CompareAndSwap(m, n); m = l.most.Load() {
		}
		defer l.sources.Add(-1)
		defer time.Sleep(l.linger) // winds down after it was told to stop
		for i := 0; ; i++ {
			select {
			case <-time.After(l.gap):
			case <-ctx.Done():
				return
			}
			it := rxgo.Of(i)
			if l.failAfter > 0 && i == l.failAfter {
				it = rxgo.Error(errBoom)
			}
			if !it.SendContext(ctx, next) || it.E != nil {
				return
			}
		}
	}}), nil
}

// operators.Bulkhead gave its permit back as soon as the consumer's context was done, while
// the source was still winding down: a second subscription then ran beside the first under
// MaxConcurrentCalls 1. The permit is now held until the source has stopped.
func TestBulkheadHoldsThePermitUntilTheSourceHasStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bh := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1})
		src := newLingering(100*time.Millisecond, 500*time.Millisecond)
		obs := operators.Bulkhead(bh)(operators.Lazy(src.Source))

		ctx, cancel := context.WithCancel(context.Background())
		first := obs.Observe(rxgo.WithContext(ctx))
		assert.Equal(t, "0", show(<-first))
		cancel() // and the consumer moves on without reading first to its end
		synctest.Wait()
		assert.Equal(t, int32(1), src.sources.Load(), "the source winds down for 500ms")
		assert.Equal(t, 0, bh.Metrics().AvailableConcurrentCalls)

		ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel2()
		got, _ := observeCtx(ctx2, obs)
		assert.Equal(t, []string{"E:bulkhead: Bulkhead 'bh' is full and does not permit further calls"}, got,
			"refused while the first source is still running")

		time.Sleep(500 * time.Millisecond)
		synctest.Wait()
		assert.Equal(t, int32(0), src.sources.Load())
		assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)
		_, open := <-first
		assert.False(t, open, "the first subscription ended once its source had")

		assert.Equal(t, []string{"0", "1"}, take(obs, 2), "admitted once it has stopped")
		assert.Equal(t, int32(1), src.most.Load())
	})
}

// With MaxWaitDuration the second subscription waits for the first source to stop.
func TestBulkheadSecondSubscriptionWaitsForTheSourceToStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bh := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1, MaxWaitDuration: time.Second})
		src := newLingering(100*time.Millisecond, 500*time.Millisecond)
		obs := operators.Bulkhead(bh)(operators.Lazy(src.Source))
		ctx, cancel := context.WithCancel(context.Background())
		first := obs.Observe(rxgo.WithContext(ctx))
		<-first
		cancel()
		start := time.Now()
		ctx2, cancel2 := context.WithCancel(context.Background())
		second := obs.Observe(rxgo.WithContext(ctx2))
		assert.Equal(t, "0", show(<-second))
		assert.Equal(t, 600*time.Millisecond, time.Since(start), "500ms winding down, then 100ms to its first item")
		cancel2()
		for range second {
		}
		for range first {
		}
		assert.Equal(t, int32(1), src.most.Load())
		assert.Equal(t, int32(0), src.sources.Load())
		assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)
	})
}

// Subscriptions cut every way — the consumer cancelling, a TimeLimiter or a Retry above the
// bulkhead, an error item — never let two sources run at once under MaxConcurrentCalls 1.
func TestBulkheadHammerOfCutSubscriptionsNeverRunsTwoSources(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bh := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1, MaxWaitDuration: time.Hour})
		tl := newTimeLimiter(t, 150*time.Millisecond)
		rt := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
		// One count for the three kinds of source: they share the bulkhead.
		running := new(counts)
		slow := &lingering{gap: 200 * time.Millisecond, linger: 30 * time.Millisecond, counts: running} // the time limiter cuts it
		quick := &lingering{gap: 10 * time.Millisecond, linger: 20 * time.Millisecond, counts: running}
		failing := &lingering{gap: 10 * time.Millisecond, linger: 40 * time.Millisecond, failAfter: 2, counts: running}
		guard := func(ps levee.Patterns, src *lingering) rxgo.Observable {
			obs, err := operators.Guard(ps, nil, src.Source)
			require.NoError(t, err)
			return obs
		}
		cut := []rxgo.Observable{
			operators.Bulkhead(bh)(operators.Lazy(quick.Source)),                  // the consumer cancels
			guard(levee.Patterns{Bulkhead: bh, TimeLimiter: tl}, slow),            // the time limiter cuts
			guard(levee.Patterns{Bulkhead: bh, Retry: rt}, failing),               // an error item, retried
			guard(levee.Patterns{Bulkhead: bh, TimeLimiter: tl, Retry: rt}, slow), // both
		}
		var wg sync.WaitGroup
		var ended atomic.Int32
		for g := range 40 {
			wg.Go(func() {
				for i := range 10 {
					ctx, cancel := context.WithCancel(context.Background())
					n := 0
					for it := range cut[(g+i)%len(cut)].Observe(rxgo.WithContext(ctx)) {
						n++
						if it.E != nil || n == 1+(g+i)%3 {
							cancel() // moves on without reading to the end
							break
						}
					}
					cancel()
					ended.Add(1)
				}
			})
		}
		wg.Wait()
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, int32(400), ended.Load())
		assert.Equal(t, int32(1), running.most.Load(), "never two sources at once")
		assert.Equal(t, int32(0), running.sources.Load())
		assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)
	})
}
