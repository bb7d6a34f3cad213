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
	"pgregory.net/rapid"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/operators"
)

// keyCalls records when each call of a test of OrderByKey started and ended, from start, and
// the most calls running at once, overall and per key.
type keyCalls struct {
	start time.Time
	key   func(int) int

	mu         sync.Mutex
	began, end map[int]time.Duration
	running    map[int]int
	now, most  int
	mostPerKey int
}

func newKeyCalls(key func(int) int) *keyCalls {
	return &keyCalls{start: time.Now(), key: key, began: map[int]time.Duration{}, end: map[int]time.Duration{}, running: map[int]int{}}
}

func (c *keyCalls) call(ctx context.Context, v int, d time.Duration) (int, error) {
	k := c.key(v)
	c.mu.Lock()
	c.began[v] = time.Since(c.start)
	c.now++
	c.most = max(c.most, c.now)
	c.running[k]++
	c.mostPerKey = max(c.mostPerKey, c.running[k])
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.now--
		c.running[k]--
		c.end[v] = time.Since(c.start)
		c.mu.Unlock()
	}()
	select {
	case <-time.After(d):
		return 10 * v, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// On random upstreams of random keys and call times, the elements of each key are called one
// at a time in upstream order and emitted in that order, each the instant its call ends, every
// one exactly once, with at most Concurrency calls at once.
func TestOrderByKeyKeepsEachKeysOrderUnderRandomLatencies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rapid.Check(bubbleTB{t}, func(rt *rapid.T) {
			n := rapid.IntRange(0, 30).Draw(rt, "n")
			c := rapid.IntRange(1, 5).Draw(rt, "concurrency")
			window := c + rapid.IntRange(0, 8).Draw(rt, "extra window")
			keys := make([]int, n+1) // of the values 1..n
			d := make([]time.Duration, n+1)
			for v := 1; v <= n; v++ {
				keys[v] = rapid.IntRange(0, 3).Draw(rt, "key")
				d[v] = time.Duration(rapid.IntRange(1, 30).Draw(rt, "ms")) * time.Millisecond
			}
			key := func(v int) int { return keys[v] }
			calls := newKeyCalls(key)
			m, err := operators.MapResults(nil, func(ctx context.Context, v int) (int, error) {
				return calls.call(ctx, v, d[v])
			}, operators.Concurrency(c), operators.Window(window), operators.OrderByKey(key))
			if err != nil {
				rt.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var got []int
			at := map[int]time.Duration{}
			for it := range m(newProbe(ints(n)...).Observable()).Observe(rxgo.WithContext(ctx)) {
				r := it.V.(operators.Result[int, int])
				if it.E != nil || r.Err != nil || r.In != r.Index+1 || r.Value != 10*r.In {
					rt.Fatalf("item %+v", it)
				}
				got = append(got, r.In)
				at[r.In] = time.Since(calls.start)
			}
			if len(got) != n || len(at) != n {
				rt.Fatalf("%d items for %d elements: %v", len(got), n, got)
			}
			last := map[int]int{}
			for _, v := range got {
				if prev, ok := last[keys[v]]; ok && prev > v {
					rt.Fatalf("key %d: element %d emitted after %d: %v", keys[v], prev, v, got)
				}
				last[keys[v]] = v
			}
			prevEnd := map[int]time.Duration{}
			for v := 1; v <= n; v++ {
				if calls.began[v] < prevEnd[keys[v]] {
					rt.Fatalf("element %d started before the previous one of key %d ended", v, keys[v])
				}
				prevEnd[keys[v]] = calls.end[v]
				if at[v] != calls.end[v] {
					rt.Fatalf("element %d: call ended at %v, emitted at %v", v, calls.end[v], at[v])
				}
			}
			if calls.most > c || calls.mostPerKey > 1 {
				rt.Fatalf("%d calls at once (concurrency %d), %d of one key", calls.most, c, calls.mostPerKey)
			}
		})
	})
}

// emittedAt observes obs and returns when each Result's element was emitted, by its value.
func emittedAt(t *testing.T, obs rxgo.Observable, start time.Time) map[int]time.Duration {
	at := map[int]time.Duration{}
	for it := range obs.Observe(rxgo.WithContext(t.Context())) {
		require.NoError(t, it.E)
		r := it.V.(operators.Result[int, int])
		require.NoError(t, r.Err)
		at[r.In] = time.Since(start)
	}
	return at
}

// Four keys of two elements each, a second per call, four workers: done in two seconds.
func TestOrderByKeyCallsKeysInParallel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := func(v int) int { return v % 4 }
		calls := newKeyCalls(key)
		m := mustOp(t)(operators.MapResults(nil, func(ctx context.Context, v int) (int, error) {
			return calls.call(ctx, v, time.Second)
		}, operators.Concurrency(4), operators.OrderByKey(key)))
		s := time.Second
		assert.Equal(t, map[int]time.Duration{1: s, 2: s, 3: s, 4: s, 5: 2 * s, 6: 2 * s, 7: 2 * s, 8: 2 * s},
			emittedAt(t, m(newProbe(ints(8)...).Observable()), calls.start))
		assert.Equal(t, 4, calls.most)
		assert.Equal(t, 1, calls.mostPerKey)
	})
}

// Key A's element (1) takes 10s, the 20 of key B after it 1s each: with two workers and a
// window of 64, B's k-th is emitted at k seconds, the last at 20s, and A's at 10s.
func TestOrderByKeyLetsOtherKeysPassASlowOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := func(v int) int { return min(v, 2) } // 1 key A, 2..21 key B
		calls := newKeyCalls(key)
		m := mustOp(t)(operators.MapResults(nil, func(ctx context.Context, v int) (int, error) {
			if v == 1 {
				return calls.call(ctx, v, 10*time.Second)
			}
			return calls.call(ctx, v, time.Second)
		}, operators.Concurrency(2), operators.Window(64), operators.OrderByKey(key)))
		want := map[int]time.Duration{1: 10 * time.Second}
		for v := 2; v <= 21; v++ {
			want[v] = time.Duration(v-1) * time.Second
		}
		assert.Equal(t, want, emittedAt(t, m(newProbe(ints(21)...).Observable()), calls.start))
	})
}

// Upstream error items and values that are not of the input type have no key: with
// ContinueOnError they come out in their own time, and the keyed elements in their key's order.
func TestOrderByKeyPassesItemsWithoutAKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := mustOp(t)(operators.Map(nil, func(_ context.Context, v int) (int, error) {
			time.Sleep(time.Duration(5-v) * time.Second)
			return 10 * v, nil
		}, operators.Concurrency(2), operators.Window(8), operators.ContinueOnError(),
			operators.OrderByKey(func(v int) int { return v % 2 })))
		got, _ := observe(m(newProbe(1, errBoom, "x", 3, 2).Observable()))
		// 1 (4s) then 3 (2s), of key 1, on one worker; the error and "x" at once on the other,
		// then 2 (3s): 2 at 3s, 1 at 4s, 3 at 6s.
		assert.Equal(t, []string{"E:boom", "E:operators: item 1 is string, not int", "20", "10", "30"}, got)
	})
}

func TestOrderByKeyIsRefusedWhenInvalid(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []operators.Option
		want string
	}{
		{"nil key", []operators.Option{operators.OrderByKey[int, string](nil)}, "operators: OrderByKey needs a key function, got nil"},
		{"key of another type", []operators.Option{operators.Concurrency(2), operators.OrderByKey(func(s string) string { return s })},
			"operators: Map needs an OrderByKey function of type func(int) K, got func(string) string"},
		{"nil key, in input order", []operators.Option{operators.OrderByKeyAndInput[int, string](nil)}, "operators: OrderByKeyAndInput needs a key function, got nil"},
		{"key of another type, in input order", []operators.Option{operators.Concurrency(2), operators.OrderByKeyAndInput(func(s string) string { return s })},
			"operators: Map needs an OrderByKeyAndInput function of type func(int) K, got func(string) string"},
		{"in input order with Unordered", []operators.Option{operators.Unordered(), operators.OrderByKeyAndInput(func(v int) int { return v })},
			"operators: set OrderByKeyAndInput or Unordered, not both: one sends the Results in input order, the other as their calls end"},
		{"both key orders", []operators.Option{operators.OrderByKeyAndInput(func(v int) int { return v }), operators.OrderByKey(func(v int) int { return v })},
			"operators: set OrderByKey or OrderByKeyAndInput, not both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op, err := operators.Map(nil, double, tc.opts...)
			assert.EqualError(t, err, tc.want)
			assert.Nil(t, op)
		})
	}
	_, err := operators.Guard(levee.Patterns{}, nil, newProbe().Source(nil), operators.OrderByKey(func(v int) int { return v }))
	assert.EqualError(t, err, "operators: option OrderByKey does not apply to Guard")
}

// Cancelled with calls running and elements waiting in their keys, the subscription emits
// nothing more and closes once every call has returned, with its bulkhead permits back.
func TestOrderByKeyCancelledMidStreamLeavesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bh := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 2})
		key := func(v int) int { return v % 2 }
		calls := newKeyCalls(key)
		m := mustOp(t)(operators.Map(levee.Compose[int]().WithBulkhead(bh), func(ctx context.Context, v int) (int, error) {
			return calls.call(ctx, v, time.Second)
		}, operators.Concurrency(2), operators.Window(8), operators.OrderByKey(key)))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ch := m(newProbe(ints(8)...).Observable()).Observe(rxgo.WithContext(ctx))
		var got []string
		for it := range ch {
			got = append(got, show(it))
			if len(got) == 2 {
				time.Sleep(500 * time.Millisecond) // 3 and 4 are being called, 5..8 wait
				cancel()
			}
		}
		assert.ElementsMatch(t, []string{"10", "20"}, got)
		assert.Equal(t, 0, calls.now)
		assert.Equal(t, map[int]time.Duration{1: time.Second, 2: time.Second, 3: 1500 * time.Millisecond, 4: 1500 * time.Millisecond}, calls.end)
		assert.Equal(t, 2, bh.Metrics().AvailableConcurrentCalls)
	})
}

// The watermark, acknowledged with AckNext as Map's items are received, stays below key A's
// slow element however many of key B's are out, and passes them all once it is.
func TestOrderByKeyWatermarkStaysBelowASlowKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		wm := operators.NewWatermark()
		m := mustOp(t)(operators.Map(nil, func(_ context.Context, v int) (int, error) {
			if v == 1 {
				time.Sleep(10 * time.Second)
			} else {
				time.Sleep(time.Second)
			}
			return 10 * v, nil
		}, operators.Concurrency(2), operators.Window(8), operators.OrderByKey(func(v int) bool { return v == 1 }),
			operators.CommitWatermark(wm)))
		var got []string
		var marks []int
		for it := range m(newProbe(ints(5)...).Observable()).Observe(rxgo.WithContext(t.Context())) {
			got = append(got, show(it))
			wm.AckNext()
			synctest.Wait() // the operator has recorded the item as complete
			marks = append(marks, wm.Load())
		}
		assert.Equal(t, []string{"20", "30", "40", "50", "10"}, got)
		assert.Equal(t, []int{0, 0, 0, 0, 5}, marks)
	})
}

// With a Concurrency of 1 the order is the upstream's and the key function is not called.
func TestOrderByKeyWithOneWorkerIsTheUpstreamOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		keyed := 0
		m := mustOp(t)(operators.Map(nil, func(_ context.Context, v int) (int, error) {
			time.Sleep(time.Duration(6-v) * time.Second)
			return 10 * v, nil
		}, operators.OrderByKey(func(v int) int { keyed++; return v % 2 })))
		start := time.Now()
		got, _ := observe(m(newProbe(ints(5)...).Observable()))
		assert.Equal(t, []string{"10", "20", "30", "40", "50"}, got)
		assert.Equal(t, 15*time.Second, time.Since(start))
		assert.Equal(t, 0, keyed)
	})
}

// PauseWhileOpen with OrderByKey: element 1 (key A), refused by the open breaker, is held and
// is the HALF_OPEN probe 1ns after the breaker's 5s wait; element 2 (key B), arriving
// meanwhile, waits for it to be let go, is tried when the probe is admitted, refused by the
// HALF_OPEN breaker and held until the probe closes it 1s later; then each key goes on in its
// order, and nothing is a fallback's answer.
func TestOrderByKeyPausesWhileOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb := newBreaker(t, circuitbreaker.Config{SlidingWindowSize: 5, MinimumNumberOfCalls: 5,
			WaitDurationInOpenState: 5 * time.Second, PermittedNumberOfCallsInHalfOpenState: 1})
		require.NoError(t, cb.TransitionToOpenState())
		key := func(v int) int { return v % 2 } // 1, 3, 5 key A; 2, 4, 6 key B
		calls := newKeyCalls(key)
		src := newProbe(ints(6)...)
		src.gap = time.Millisecond
		m := mustOp(t)(operators.MapResults(levee.Compose[int]().WithCircuitBreaker(cb), func(ctx context.Context, v int) (int, error) {
			return calls.call(ctx, v, time.Second)
		}, operators.Concurrency(2), operators.Window(8), operators.OrderByKey(key), operators.PauseWhileOpen(0),
			operators.WithFallback(func(context.Context, int, error) (int, error) { return -1, nil })))
		at := map[int]time.Duration{}
		paused := map[int]time.Duration{}
		for it := range m(src.Observable()).Observe(rxgo.WithContext(t.Context())) {
			r := it.V.(operators.Result[int, int])
			require.NoError(t, r.Err)
			assert.False(t, r.Fallback)
			at[r.In] = time.Since(calls.start)
			if r.Paused != 0 {
				paused[r.In] = r.Paused
			}
		}
		// Element 1 arrives at 1ms (the upstream's gap) and is held until the wait, begun at 0,
		// is over, 1ns past 5s; its call ends 1s later, and the others follow per key.
		s, ms := time.Second, time.Millisecond
		assert.Equal(t, map[int]time.Duration{1: 6*s + 1, 2: 7*s + 1, 3: 7*s + 1, 4: 8*s + 1, 5: 8*s + 1, 6: 9*s + 1}, at)
		assert.Equal(t, map[int]time.Duration{1: 5*s - ms + 1, 2: s}, paused)
		assert.Equal(t, circuitbreaker.Closed, cb.State())
	})
}
