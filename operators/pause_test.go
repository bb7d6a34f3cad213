package operators_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/operators"
	"github.com/levee-go/levee/ratelimiter"
)

// outage is the scenario of the PauseWhileOpen tests: elements 1..100, one call at a time,
// each call taking 100ms of a dependency that fails every call started before 2s. The breaker
// opens on the 5th failure, at 500ms, for 5s; a bulkhead of 1 guards the calls.
type outage struct {
	start time.Time
	cb    *circuitbreaker.CircuitBreaker
	bh    *bulkhead.Bulkhead
	p     *levee.Pipeline[int]

	mu     sync.Mutex
	called []int
	at     []time.Duration
}

func newOutage(t *testing.T) *outage {
	o := &outage{start: time.Now()}
	o.cb = newBreaker(t, circuitbreaker.Config{SlidingWindowSize: 5, MinimumNumberOfCalls: 5,
		WaitDurationInOpenState: 5 * time.Second, PermittedNumberOfCallsInHalfOpenState: 1})
	o.bh = newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1})
	o.p = levee.Compose[int]().WithBulkhead(o.bh).WithCircuitBreaker(o.cb)
	return o
}

func (o *outage) call(ctx context.Context, v int) (int, error) {
	now := time.Since(o.start)
	o.mu.Lock()
	o.called = append(o.called, v)
	o.at = append(o.at, now)
	o.mu.Unlock()
	select {
	case <-time.After(100 * time.Millisecond):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	if now < 2*time.Second {
		return 0, errBoom
	}
	return v * 10, nil
}

// run subscribes MapResults with opts and a fallback answering -1 under ctx.
func (o *outage) run(t *testing.T, ctx context.Context, opts ...operators.Option) []operators.Result[int, int] {
	opts = append(opts, operators.WithFallback(func(context.Context, int, error) (int, error) { return -1, nil }))
	op, err := operators.MapResults(o.p, o.call, opts...)
	require.NoError(t, err)
	var rs []operators.Result[int, int]
	for it := range op(rxgo.Just(ints(100)...)()).Observe(rxgo.WithContext(ctx)) {
		require.NoError(t, it.E)
		rs = append(rs, it.V.(operators.Result[int, int]))
	}
	return rs
}

func figures(rs []operators.Result[int, int]) (idx []int, live, failed, rejected int, paused map[int]time.Duration) {
	paused = map[int]time.Duration{}
	for _, r := range rs {
		idx = append(idx, r.Index)
		switch {
		case !r.Fallback:
			live++
		case levee.IsRejection(r.Cause):
			rejected++
		default:
			failed++
		}
		if r.Paused != 0 {
			paused[r.Index] = r.Paused
		}
	}
	return
}

func seq(from, to int) []int {
	var s []int
	for i := from; i <= to; i++ {
		s = append(s, i)
	}
	return s
}

func TestPauseWhileOpenWithout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newOutage(t)
		idx, live, failed, rejected, paused := figures(o.run(t, t.Context()))
		assert.Equal(t, seq(0, 99), idx)
		assert.Equal(t, [3]int{0, 5, 95}, [3]int{live, failed, rejected})
		assert.Empty(t, paused)
		assert.Equal(t, seq(1, 5), o.called)
		assert.Equal(t, 500*time.Millisecond, time.Since(o.start))
	})
}

func TestPauseWhileOpenAnswersLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newOutage(t)
		rs := o.run(t, t.Context(), operators.PauseWhileOpen(0))
		idx, live, failed, rejected, paused := figures(rs)
		assert.Equal(t, seq(0, 99), idx)
		assert.Equal(t, [3]int{95, 5, 0}, [3]int{live, failed, rejected})
		assert.Equal(t, map[int]time.Duration{5: 5*time.Second + 1}, paused)
		assert.Equal(t, 60, rs[5].Value) // the held element, element 6, was the probe
		assert.Equal(t, seq(1, 100), o.called)
		assert.Equal(t, 5500*time.Millisecond+1, o.at[5])
		assert.Equal(t, circuitbreaker.Closed, o.cb.State())
		assert.Equal(t, 5500*time.Millisecond+1+95*100*time.Millisecond, time.Since(o.start))
		assert.Equal(t, 1, o.bh.Metrics().AvailableConcurrentCalls)
	})
}

func TestPauseWhileOpenMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newOutage(t)
		idx, live, failed, rejected, paused := figures(o.run(t, t.Context(), operators.PauseWhileOpen(2*time.Second)))
		assert.Equal(t, seq(0, 99), idx)
		assert.Equal(t, [3]int{93, 5, 2}, [3]int{live, failed, rejected})
		assert.Equal(t, map[int]time.Duration{5: 2 * time.Second, 6: 2 * time.Second, 7: time.Second + 1}, paused)
		assert.Equal(t, append(seq(1, 5), seq(8, 100)...), o.called)
	})
}

func TestPauseWhileOpenCancelWhilePaused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newOutage(t)
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(1500*time.Millisecond, cancel) // element 6 is held from 500ms
		idx, _, _, _, _ := figures(o.run(t, ctx, operators.PauseWhileOpen(0)))
		assert.Equal(t, seq(0, 4), idx)
		assert.Equal(t, 1500*time.Millisecond, time.Since(o.start))
		synctest.Wait()
		assert.Equal(t, 1, o.bh.Metrics().AvailableConcurrentCalls)
		assert.Equal(t, circuitbreaker.Open, o.cb.State())
		assert.Equal(t, seq(1, 5), o.called)
	})
}

func TestPauseWhileOpenInvalid(t *testing.T) {
	_, err := operators.Map(nil, double, operators.PauseWhileOpen(-time.Second))
	require.EqualError(t, err, "operators: PauseWhileOpen maxWait must be >= 0 (0: no bound), got -1s")
}

// A rate limiter that refuses at once: with the option, Filter's held elements wait one cycle
// each and every element is decided by a live call.
func TestPauseWhileOpenRateLimiterFilter(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []operators.Option
		want []string
		took time.Duration
	}{
		{"without", []operators.Option{operators.ContinueOnError()}, []string{"2",
			"E:ratelimiter: RateLimiter 'rl' does not permit further calls",
			"E:ratelimiter: RateLimiter 'rl' does not permit further calls",
			"E:ratelimiter: RateLimiter 'rl' does not permit further calls"}, 0},
		{"with", []operators.Option{operators.PauseWhileOpen(0)}, []string{"2", "4"}, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				rl := newRateLimiter(t, ratelimiter.Config{LimitForPeriod: 2, LimitRefreshPeriod: time.Second,
					TimeoutDuration: ratelimiter.NoWait})
				p := levee.Compose[bool]().WithRateLimiter(rl)
				even, err := operators.Filter(p, func(_ context.Context, v int) (bool, error) { return v%2 == 0, nil }, tc.opts...)
				require.NoError(t, err)
				got, _ := observeCtx(t.Context(), even(rxgo.Just(ints(5)...)()))
				assert.Equal(t, tc.want, got)
				assert.Equal(t, tc.took, time.Since(start))
			})
		})
	}
}
