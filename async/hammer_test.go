package async_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/ratelimiter"
)

// invocations counts how the invocations of the dependency ended, from the dependency's side:
// the breaker must have recorded exactly the successes and the failures, and released the rest.
type invocations struct{ ok, failed, cancelled atomic.Int64 }

// dependency returns a call whose behaviour is drawn from r: an answer at once or after a
// while (honouring its context), an error, or a panic.
func (n *invocations) dependency(r *rand.Rand) levee.Call[int] {
	mode := r.IntN(10)
	d := time.Duration(r.IntN(5)) * time.Millisecond
	return func(ctx context.Context) (int, error) {
		switch mode {
		case 0:
			n.failed.Add(1)
			panic("hammer")
		case 1, 2:
			n.failed.Add(1)
			return 0, errBoom
		}
		if d > 0 {
			timer := time.NewTimer(d)
			defer timer.Stop()
			select {
			case <-timer.C:
			case <-ctx.Done():
				n.cancelled.Add(1)
				return 0, ctx.Err()
			}
		}
		n.ok.Add(1)
		return 1, nil
	}
}

// TestHammerFuturesShareOnePipeline runs 64 goroutines of futures, fan-outs, races, hedges and
// pool tasks, with random outcomes, cancellations and deadlines, through one breaker, bulkhead,
// rate limiter, retry and fallback and one worker pool. Afterwards every permit is back, the
// pool is idle, the breaker recorded exactly what the dependency did, and every admitted pool
// task that started has finished.
func TestHammerFuturesShareOnePipeline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb := newBreaker(t, circuitbreaker.Config{SlidingWindowSize: 1 << 20, MinimumNumberOfCalls: 1 << 20})
		bh, err := bulkhead.New("bh", bulkhead.Config{MaxConcurrentCalls: 16, MaxWaitDuration: time.Millisecond})
		require.NoError(t, err)
		rl, err := ratelimiter.New("rl", ratelimiter.Config{
			LimitForPeriod: 200, LimitRefreshPeriod: time.Millisecond, TimeoutDuration: ratelimiter.NoWait,
		})
		require.NoError(t, err)
		fb := answering(t, -1)
		fbm := fb.Metrics
		p := levee.DefaultPipeline(levee.Patterns{
			Retry: newRetry(t, 2), CircuitBreaker: cb, RateLimiter: rl, Bulkhead: bh,
		}, fb)
		pool, err := async.NewWorkerPool("pool", async.WorkerPoolConfig{
			CoreThreadPoolSize: 2, MaxThreadPoolSize: 6, QueueCapacity: 8,
		})
		require.NoError(t, err)
		events := recordEvents(pool)

		var n invocations
		var submitted, refused atomic.Int64
		var wg sync.WaitGroup
		for g := range 64 {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(g), 7))
				for range 40 {
					ctx, cancel := context.Background(), context.CancelFunc(func() {})
					if r.IntN(4) == 0 {
						ctx, cancel = context.WithTimeout(ctx, time.Duration(r.IntN(4))*time.Millisecond)
					}
					calls := make([]levee.Call[int], 1+r.IntN(4))
					for i := range calls {
						calls[i] = n.dependency(r)
					}
					var errs []error
					switch r.IntN(5) {
					case 0:
						f := async.Go(ctx, p, calls[0])
						if r.IntN(3) == 0 {
							f.Cancel()
						}
						_, err := f.Get(context.Background())
						errs = append(errs, err)
					case 1:
						var opts []async.Option
						if r.IntN(2) == 0 {
							opts = append(opts, async.FailFast())
						}
						if r.IntN(2) == 0 {
							opts = append(opts, async.MaxConcurrency(1+r.IntN(2)))
						}
						rs, _ := async.All(ctx, p, calls, opts...)
						for _, res := range rs {
							errs = append(errs, res.Err)
						}
					case 2:
						_, _, err := async.FirstSuccess(ctx, p, calls)
						errs = append(errs, err)
					case 3:
						_, _, err := async.Hedge(ctx, p, calls[0], time.Millisecond, r.IntN(3))
						errs = append(errs, err)
					case 4:
						f, err := async.Submit(ctx, pool, p, calls[0])
						var full *async.WorkerPoolFullError
						switch {
						case err != nil: // the fallback answers a refusal: only a done ctx is left
							errs = append(errs, err)
						case errors.As(f.Outcome().Cause, &full):
							refused.Add(1)
							v, err := f.Get(context.Background())
							assert.Equal(t, -1, v, "the fallback's answer")
							errs = append(errs, err)
						default:
							submitted.Add(1)
							if r.IntN(3) == 0 {
								f.Cancel()
							}
							_, err = f.Get(context.Background())
							errs = append(errs, err)
						}
					}
					cancel()
					for _, err := range errs {
						// The fallback answers every failure of the dependency; what is left is
						// cancellation, and a failed fallback never happens.
						if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
							t.Errorf("unexpected error %v", err)
						}
					}
				}
			})
		}
		wg.Wait()
		synctest.Wait()

		t.Logf("invocations: %d ok, %d failed, %d cancelled; pool: %d submitted, %d refused; breaker: %+v; fallback: %+v",
			n.ok.Load(), n.failed.Load(), n.cancelled.Load(), submitted.Load(), refused.Load(), cb.Metrics(), fbm())
		m := cb.Metrics()
		assert.Equal(t, int(n.ok.Load()), m.NumberOfSuccessfulCalls, "every success recorded once")
		assert.Equal(t, int(n.failed.Load()), m.NumberOfFailedCalls, "every failure recorded once")
		assert.Positive(t, n.cancelled.Load(), "cancellations happened and were not recorded")
		assert.Equal(t, 16, bh.Metrics().AvailableConcurrentCalls, "every bulkhead permit is back")
		pm := pool.Metrics()
		assert.Equal(t, 0, pm.ActiveThreadCount)
		assert.Equal(t, 0, pm.QueueDepth)
		assert.Positive(t, submitted.Load())

		require.NoError(t, pool.Close())
		count := map[async.WorkerPoolEventType]int64{}
		for _, e := range events.get() {
			count[e]++
		}
		assert.Equal(t, count[async.EventCallPermitted], count[async.EventCallFinished], "every task that started finished")
		assert.LessOrEqual(t, count[async.EventCallPermitted], submitted.Load())
		assert.Equal(t, refused.Load(), count[async.EventCallRejected], "every refusal answered by the fallback")
		assert.Positive(t, refused.Load())
	})
}
