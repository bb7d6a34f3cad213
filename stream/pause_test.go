package stream_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/stream"
)

// outage is the scenario of the PauseWhileOpen tests: 100 elements, one call at a time, each
// call taking 100ms of a dependency that fails every call started before recoverAt (2s). The
// breaker opens on the 5th failure, at 500ms, for 5s; a bulkhead of 1 guards the calls.
type outage struct {
	start time.Time
	cb    *circuitbreaker.CircuitBreaker
	bh    *bulkhead.Bulkhead
	p     *levee.Pipeline[int]

	mu     sync.Mutex
	called []int           // elements called, in call order
	at     []time.Duration // when each call started, from start
	trans  []string        // breaker transitions with their instant
}

const (
	outageElements  = 100
	outageCall      = 100 * time.Millisecond
	outageRecoverAt = 2 * time.Second
	outageOpenWait  = 5 * time.Second
)

func newOutage(t *testing.T) *outage {
	o := &outage{start: time.Now()}
	o.cb = newBreaker(t, circuitbreaker.Config{SlidingWindowSize: 5, MinimumNumberOfCalls: 5,
		WaitDurationInOpenState: outageOpenWait, PermittedNumberOfCallsInHalfOpenState: 1})
	o.bh = newBulkhead(t, 1)
	o.cb.Subscribe(func(e circuitbreaker.Event) {
		if e.Type == circuitbreaker.EventStateTransition {
			o.mu.Lock()
			o.trans = append(o.trans, e.From.String()+">"+e.To.String()+"@"+time.Since(o.start).String())
			o.mu.Unlock()
		}
	})
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
	case <-time.After(outageCall):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	if now < outageRecoverAt {
		return 0, errBoom
	}
	return v * 10, nil
}

// run maps the 100 elements with opts and a fallback answering -1, and returns the results.
func (o *outage) run(t *testing.T, ctx context.Context, opts ...stream.Option) []stream.Result[int, int] {
	opts = append(opts, stream.WithFallback(func(context.Context, int, error) (int, error) { return -1, nil }))
	out, err := stream.Map(ctx, feed(ctx, count(outageElements)...), o.p, o.call, opts...)
	require.NoError(t, err)
	return drain(out)
}

// figures counts the results answered live, by the fallback for a failure of the dependency,
// and by the fallback for a rejection.
func figures(rs []stream.Result[int, int]) (live, failed, rejected int) {
	for _, r := range rs {
		switch {
		case !r.Fallback:
			live++
		case levee.IsRejection(r.Cause):
			rejected++
		default:
			failed++
		}
	}
	return
}

func pausedOf(rs []stream.Result[int, int]) map[int]time.Duration {
	m := map[int]time.Duration{}
	for _, r := range rs {
		if r.Paused != 0 {
			m[r.Index] = r.Paused
		}
	}
	return m
}

// Without PauseWhileOpen, the backlog drains into the fallback while the breaker is open.
func TestPauseWhileOpenWithout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newOutage(t)
		rs := o.run(t, t.Context())
		require.Equal(t, count(outageElements), indexes(rs))
		live, failed, rejected := figures(rs)
		assert.Equal(t, [3]int{0, 5, 95}, [3]int{live, failed, rejected})
		assert.Equal(t, []int{0, 1, 2, 3, 4}, o.called)
		assert.Equal(t, 500*time.Millisecond, time.Since(o.start))
		assert.Empty(t, pausedOf(rs))
	})
}

// With PauseWhileOpen, the refused element waits out the breaker's wait and is its probe;
// every element after the outage is answered live.
func TestPauseWhileOpenAnswersLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newOutage(t)
		rs := o.run(t, t.Context(), stream.PauseWhileOpen(0))
		require.Equal(t, count(outageElements), indexes(rs))
		live, failed, rejected := figures(rs)
		assert.Equal(t, [3]int{95, 5, 0}, [3]int{live, failed, rejected})
		for _, r := range rs[5:] {
			assert.Equal(t, r.In*10, r.Value)
		}
		// Element 5 was refused at 500ms and held until 1ns after the 5s wait.
		assert.Equal(t, map[int]time.Duration{5: outageOpenWait + 1}, pausedOf(rs))
		assert.Equal(t, count(outageElements), o.called) // each element called once, in order
		assert.Equal(t, 500*time.Millisecond+outageOpenWait+1, o.at[5])
		assert.Equal(t, []string{
			"CLOSED>OPEN@500ms",
			"OPEN>HALF_OPEN@5.500000001s",
			"HALF_OPEN>CLOSED@5.600000001s", // element 5, the probe, succeeded
		}, o.trans)
		assert.Equal(t, 500*time.Millisecond+outageOpenWait+1+95*outageCall, time.Since(o.start))
		assert.Equal(t, 1, o.bh.Metrics().AvailableConcurrentCalls)
	})
}

// maxWait shorter than the breaker's wait: each element held that long goes to the fallback,
// and the next element is held in its turn.
func TestPauseWhileOpenMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newOutage(t)
		rs := o.run(t, t.Context(), stream.PauseWhileOpen(2*time.Second))
		require.Equal(t, count(outageElements), indexes(rs))
		live, failed, rejected := figures(rs)
		assert.Equal(t, [3]int{93, 5, 2}, [3]int{live, failed, rejected})
		assert.ErrorIs(t, rs[5].Cause, circuitbreaker.ErrCallNotPermitted)
		assert.ErrorIs(t, rs[6].Cause, circuitbreaker.ErrCallNotPermitted)
		// 5 held 0.5s-2.5s, 6 held 2.5s-4.5s, 7 held 4.5s to the end of the wait, 5.5s+1ns.
		assert.Equal(t, map[int]time.Duration{5: 2 * time.Second, 6: 2 * time.Second, 7: time.Second + 1}, pausedOf(rs))
		assert.Equal(t, append([]int{0, 1, 2, 3, 4}, count(outageElements)[7:]...), o.called)
	})
}

// A consumer that cancels while an element is held ends the stream: the output closes, no
// goroutine is left and the bulkhead's permit is back.
func TestPauseWhileOpenCancelWhilePaused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newOutage(t)
		ctx, cancel := context.WithCancel(t.Context())
		out, err := stream.Map(ctx, feed(ctx, count(outageElements)...), o.p, o.call, stream.PauseWhileOpen(0))
		require.NoError(t, err)
		var rs []stream.Result[int, int]
		for range 5 {
			rs = append(rs, <-out)
		}
		time.Sleep(time.Second) // element 5 is held from 500ms
		synctest.Wait()
		cancel()
		rs = append(rs, drain(out)...)
		assert.Equal(t, []int{0, 1, 2, 3, 4}, indexes(rs))
		assert.Equal(t, 1500*time.Millisecond, time.Since(o.start))
		synctest.Wait()
		assert.Equal(t, 1, o.bh.Metrics().AvailableConcurrentCalls)
		assert.Equal(t, circuitbreaker.Open, o.cb.State())
		assert.Equal(t, []int{0, 1, 2, 3, 4}, o.called)
	})
}

func TestPauseWhileOpenInvalid(t *testing.T) {
	_, err := stream.Map(context.Background(), make(chan int), nil,
		func(context.Context, int) (int, error) { return 0, nil }, stream.PauseWhileOpen(-time.Second))
	require.EqualError(t, err, "stream: PauseWhileOpen maxWait must be >= 0 (0: no bound), got -1s")
}

// With four calls at once, the calls running when the breaker opens finish; of the elements
// taken next, the first refused is held and probes alone, the others wait for it (at the
// gate, or refused too if their call had started); once the probe is admitted they are tried,
// refused by the HALF_OPEN breaker, and called once it has closed. Nothing is skipped,
// reordered or called twice.
func TestPauseWhileOpenConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newOutage(t)
		o.bh = newBulkhead(t, 4)
		o.p = levee.Compose[int]().WithBulkhead(o.bh).WithCircuitBreaker(o.cb)
		rs := o.run(t, t.Context(), stream.PauseWhileOpen(0), stream.Concurrency(4))
		require.Equal(t, count(outageElements), indexes(rs))
		live, failed, rejected := figures(rs)
		// 0-3 failed at 100ms, 4-7 were running when the 5th failure opened the breaker at
		// 200ms: they finish, and fail.
		assert.Equal(t, [3]int{92, 8, 0}, [3]int{live, failed, rejected})
		t.Logf("paused %v at %v called %v", pausedOf(rs), o.at[:14], o.called[:14])
		// The first refused element is held until the wait ends; an element whose call had
		// started before it was held, and was refused too, waits for the probe's return.
		paused := pausedOf(rs)
		probe := -1
		for i, d := range paused {
			if d == outageOpenWait+1 {
				require.Equal(t, -1, probe, "one probe")
				probe = i
			} else {
				// Tried once the probe was admitted, refused by the HALF_OPEN breaker and
				// let go at its close; 5s more when its call had started before the hold.
				assert.Contains(t, []time.Duration{outageCall, outageOpenWait + outageCall + 1}, d, "element %d", i)
			}
		}
		assert.Contains(t, []int{8, 9, 10, 11}, probe)
		// The probe is the first call after the 8 failures, alone until it returns.
		assert.Equal(t, probe, o.called[8])
		assert.Equal(t, 200*time.Millisecond+outageOpenWait+1, o.at[8])
		for _, at := range o.at[9:] {
			assert.GreaterOrEqual(t, at, 300*time.Millisecond+outageOpenWait+1)
		}
		assert.ElementsMatch(t, count(outageElements), o.called)
		assert.Equal(t, []string{"CLOSED>OPEN@200ms", "OPEN>HALF_OPEN@5.200000001s", "HALF_OPEN>CLOSED@5.300000001s"}, o.trans)
		assert.Equal(t, 4, o.bh.Metrics().AvailableConcurrentCalls)
	})
}

// A rate limiter that refuses at once: the held element waits for the limiter's next cycle.
func TestPauseWhileOpenRateLimiter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   []stream.Option
		live   int
		paused map[int]time.Duration
		took   time.Duration
	}{
		{"without", nil, 2, map[int]time.Duration{}, 0},
		{"with", []stream.Option{stream.PauseWhileOpen(0)}, 10,
			map[int]time.Duration{2: time.Second, 4: time.Second, 6: time.Second, 8: time.Second}, 4 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				rl := newRateLimiter(t, ratelimiter.Config{LimitForPeriod: 2, LimitRefreshPeriod: time.Second,
					TimeoutDuration: ratelimiter.NoWait})
				p := levee.Compose[int]().WithRateLimiter(rl)
				out, err := stream.Map(t.Context(), feed(t.Context(), count(10)...), p,
					func(_ context.Context, v int) (int, error) { return v, nil }, tc.opts...)
				require.NoError(t, err)
				rs := drain(out)
				require.Equal(t, count(10), indexes(rs))
				live := 0
				for _, r := range rs {
					if r.Err == nil {
						live++
					} else {
						assert.ErrorIs(t, r.Err, ratelimiter.ErrRequestNotPermitted)
					}
				}
				assert.Equal(t, tc.live, live)
				assert.Equal(t, tc.paused, pausedOf(rs))
				assert.Equal(t, tc.took, time.Since(start))
			})
		})
	}
}

// A full bulkhead: the held element is retried when the permit's holder finishes, an event.
func TestPauseWhileOpenBulkhead(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   []stream.Option
		live   int
		paused map[int]time.Duration
	}{
		{"without", nil, 0, map[int]time.Duration{}},
		{"with", []stream.Option{stream.PauseWhileOpen(0)}, 3, map[int]time.Duration{0: 3 * time.Second}},
		{"bounded", []stream.Option{stream.PauseWhileOpen(2 * time.Second)}, 2,
			map[int]time.Duration{0: 2 * time.Second, 1: time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				bh := newBulkhead(t, 1)
				require.NoError(t, bh.Acquire(t.Context())) // another caller's call, for 3s
				time.AfterFunc(3*time.Second, bh.Release)
				p := levee.Compose[int]().WithBulkhead(bh)
				out, err := stream.Map(t.Context(), feed(t.Context(), count(3)...), p,
					func(_ context.Context, v int) (int, error) { return v, nil }, tc.opts...)
				require.NoError(t, err)
				rs := drain(out)
				require.Equal(t, count(3), indexes(rs))
				live := 0
				for _, r := range rs {
					if r.Err == nil {
						live++
					} else {
						assert.ErrorIs(t, r.Err, bulkhead.ErrBulkheadFull)
					}
				}
				assert.Equal(t, tc.live, live)
				assert.Equal(t, tc.paused, pausedOf(rs))
				time.Sleep(4*time.Second - time.Since(start)) // past the other caller's release
				assert.Equal(t, 1, available(bh))
			})
		})
	}
}

// A rejection the pipeline's own fallback answered is held all the same: the answer is
// dropped and the element retried, so no element of the outage gets it.
func TestPauseWhileOpenPipelineFallback(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		opts                   []stream.Option
		live, failed, rejected int
	}{
		{"without", nil, 0, 5, 95},
		{"with", []stream.Option{stream.PauseWhileOpen(0)}, 95, 5, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				o := newOutage(t)
				fb, err := fallback.New("price", fallback.OnAny(fallback.Value(-1)))
				require.NoError(t, err)
				o.p = levee.Compose[int]().WithBulkhead(o.bh).WithCircuitBreaker(o.cb).WithFallback(fb)
				out, err := stream.Map(t.Context(), feed(t.Context(), count(outageElements)...), o.p, o.call, tc.opts...)
				require.NoError(t, err)
				rs := drain(out)
				require.Equal(t, count(outageElements), indexes(rs))
				live, failed, rejected := figures(rs)
				assert.Equal(t, [3]int{tc.live, tc.failed, tc.rejected}, [3]int{live, failed, rejected})
			})
		})
	}
}

// Whatever the outage, the open wait, the call durations and the concurrency, PauseWhileOpen
// answers no element with a rejection, calls each element exactly once, keeps input order,
// and answers live every element called after the dependency recovered.
func TestPauseWhileOpenProperty(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rapid.Check(bubbleTB{t}, func(rt *rapid.T) {
			n := rapid.IntRange(1, 60).Draw(rt, "n")
			c := rapid.IntRange(1, 6).Draw(rt, "concurrency")
			recoverAt := time.Duration(rapid.IntRange(0, 30).Draw(rt, "recoverAt(100ms)")) * 100 * time.Millisecond
			wait := time.Duration(rapid.IntRange(1, 30).Draw(rt, "openWait(100ms)")) * 100 * time.Millisecond
			durs := rapid.SliceOfN(rapid.IntRange(0, 20), n, n).Draw(rt, "call(10ms)")
			start := time.Now()
			cb := newBreaker(t, circuitbreaker.Config{SlidingWindowSize: 5, MinimumNumberOfCalls: 5,
				WaitDurationInOpenState: wait})
			bh := newBulkhead(t, c)
			p := levee.Compose[int]().WithBulkhead(bh).WithCircuitBreaker(cb)
			var mu sync.Mutex
			calls := map[int]int{}
			startedAt := map[int]time.Duration{}
			fn := func(ctx context.Context, v int) (int, error) {
				now := time.Since(start)
				mu.Lock()
				calls[v]++
				startedAt[v] = now
				mu.Unlock()
				time.Sleep(time.Duration(durs[v]) * 10 * time.Millisecond)
				if now < recoverAt {
					return 0, errBoom
				}
				return v, nil
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out, err := stream.Map(ctx, feed(ctx, count(n)...), p, fn, stream.Concurrency(c), stream.PauseWhileOpen(0))
			require.NoError(rt, err)
			rs := drain(out)
			require.Equal(rt, count(n), indexes(rs))
			for _, r := range rs {
				require.False(rt, levee.IsRejection(r.Err), "element %d: %v", r.Index, r.Err)
				require.Equal(rt, 1, calls[r.Index], "element %d", r.Index)
				if startedAt[r.Index] >= recoverAt {
					require.NoError(rt, r.Err)
					require.Equal(rt, r.Index, r.Value)
				} else {
					require.ErrorIs(rt, r.Err, errBoom)
				}
			}
			synctest.Wait()
			require.Equal(rt, c, available(bh))
		})
	})
}
