package stream_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/stream"
)

// keyCalls records the calls of a test of OrderByKey: when each started and ended, from start,
// and the most calls running at once, overall and per key.
type keyCalls struct {
	start time.Time
	key   func(int) int

	mu         sync.Mutex
	began, end map[int]time.Duration
	running    map[int]int // per key
	now, most  int
	mostPerKey int
}

func newKeyCalls(key func(int) int) *keyCalls {
	return &keyCalls{start: time.Now(), key: key, began: map[int]time.Duration{}, end: map[int]time.Duration{}, running: map[int]int{}}
}

// call is a call of element v that lasts d(v), unless ctx ends first.
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

// On random streams of random keys and call times, OrderByKey calls the elements of each key
// one at a time in input order, sends each Result the instant its call ends, in the order of
// its key, and every element exactly once, with at most Concurrency calls at once.
func TestOrderByKeyKeepsEachKeysOrderUnderRandomLatencies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rapid.Check(bubbleTB{t}, func(rt *rapid.T) {
			n := rapid.IntRange(0, 40).Draw(rt, "n")
			c := rapid.IntRange(1, 6).Draw(rt, "concurrency")
			window := c + rapid.IntRange(0, 10).Draw(rt, "extra window")
			buffer := rapid.IntRange(0, 3).Draw(rt, "buffer")
			keys := make([]int, n)
			d := make([]time.Duration, n)
			for k := range n {
				keys[k] = rapid.IntRange(0, 4).Draw(rt, "key")
				d[k] = time.Duration(rapid.IntRange(1, 40).Draw(rt, "ms")) * time.Millisecond
			}
			key := func(v int) int { return keys[v] }

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			calls := newKeyCalls(key)
			out, err := stream.Map(ctx, feed(ctx, count(n)...), nil, func(ctx context.Context, v int) (int, error) {
				return calls.call(ctx, v, d[v])
			}, stream.Concurrency(c), stream.Window(window), stream.Buffer(buffer), stream.OrderByKey(key))
			if err != nil {
				rt.Fatal(err)
			}
			var got []int
			at := map[int]time.Duration{}
			for r := range out {
				if r.Err != nil || r.Value != 10*r.Index || r.In != r.Index {
					rt.Fatalf("result %+v", r)
				}
				got = append(got, r.Index)
				at[r.Index] = time.Since(calls.start)
			}

			if len(got) != n || len(at) != n {
				rt.Fatalf("%d results for %d elements: %v", len(got), n, got)
			}
			last := map[int]int{}
			for _, i := range got {
				if prev, ok := last[keys[i]]; ok && prev > i {
					rt.Fatalf("key %d: element %d sent after %d: %v", keys[i], prev, i, got)
				}
				last[keys[i]] = i
			}
			prevEnd := map[int]time.Duration{}
			for i := range n {
				if calls.began[i] < prevEnd[keys[i]] {
					rt.Fatalf("element %d started at %v, before the previous one of key %d ended at %v",
						i, calls.began[i], keys[i], prevEnd[keys[i]])
				}
				prevEnd[keys[i]] = calls.end[i]
				if at[i] != calls.end[i] {
					rt.Fatalf("element %d: call ended at %v, sent at %v", i, calls.end[i], at[i])
				}
			}
			if calls.most > c || calls.mostPerKey > 1 {
				rt.Fatalf("%d calls at once (concurrency %d), %d of one key", calls.most, c, calls.mostPerKey)
			}
		})
	})
}

// Four keys of two elements each, a second per call, four workers: every key's first element
// is called at once, its second after it, and the eight are done in two seconds.
func TestOrderByKeyCallsKeysInParallel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		key := func(v int) int { return v % 4 }
		calls := newKeyCalls(key)
		out, err := stream.Map(t.Context(), feed(t.Context(), count(8)...), nil, func(ctx context.Context, v int) (int, error) {
			return calls.call(ctx, v, time.Second)
		}, stream.Concurrency(4), stream.OrderByKey(key))
		require.NoError(t, err)
		at := map[int]time.Duration{}
		for r := range out {
			require.NoError(t, r.Err)
			at[r.Index] = time.Since(calls.start)
		}
		s := time.Second
		assert.Equal(t, map[int]time.Duration{0: s, 1: s, 2: s, 3: s, 4: 2 * s, 5: 2 * s, 6: 2 * s, 7: 2 * s}, at)
		assert.Equal(t, 4, calls.most)
		assert.Equal(t, 1, calls.mostPerKey)
	})
}

// Key A's first element takes 10s; the 20 elements of key B after it take 1s each. With two
// workers and a window of 64, B's elements are called one after the other on the second
// worker, and each is sent the instant its call ends: the k-th at k+1 seconds, the last at
// 20s, while A's is sent at 10s. Ordered by input, none of B's would be sent before 10s.
func TestOrderByKeyLetsOtherKeysPassASlowOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const a = 0 // element 0 is key A's, 1..20 key B's
		key := func(v int) int { return min(v, 1) }
		calls := newKeyCalls(key)
		out, err := stream.Map(t.Context(), feed(t.Context(), count(21)...), nil, func(ctx context.Context, v int) (int, error) {
			if v == a {
				return calls.call(ctx, v, 10*time.Second)
			}
			return calls.call(ctx, v, time.Second)
		}, stream.Concurrency(2), stream.Window(64), stream.OrderByKey(key))
		require.NoError(t, err)
		at := map[int]time.Duration{}
		for r := range out {
			require.NoError(t, r.Err)
			at[r.Index] = time.Since(calls.start)
		}
		want := map[int]time.Duration{a: 10 * time.Second}
		for b := 1; b <= 20; b++ {
			want[b] = time.Duration(b) * time.Second
		}
		assert.Equal(t, want, at)
	})
}

// The window bounds what a slow key holds: with a window of 4, key A's four elements (the
// first taking 10s, the others 1s) fill it, and key B's are taken only as A's are sent. With a
// window of 8 they pass at once.
func TestOrderByKeyHoldsOtherKeysOnlyOnceTheWindowIsFull(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		window int
		want   map[int]time.Duration
	}{
		// A0 is sent at 10s and frees a place: B4 is called, then B5.. each as the one before
		// it is sent; A1..A3 follow A0 on the first worker.
		{4, map[int]time.Duration{0: 10 * s, 1: 11 * s, 2: 12 * s, 3: 13 * s, 4: 11 * s, 5: 12 * s, 6: 13 * s, 7: 14 * s, 8: 15 * s}},
		{8, map[int]time.Duration{0: 10 * s, 1: 11 * s, 2: 12 * s, 3: 13 * s, 4: 1 * s, 5: 2 * s, 6: 3 * s, 7: 4 * s, 8: 5 * s}},
	} {
		t.Run(fmt.Sprintf("window %d", tc.window), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				key := func(v int) int { return min(v/4, 1) } // 0..3 key A, 4..8 key B
				calls := newKeyCalls(key)
				out, err := stream.Map(t.Context(), feed(t.Context(), count(9)...), nil, func(ctx context.Context, v int) (int, error) {
					if v == 0 {
						return calls.call(ctx, v, 10*time.Second)
					}
					return calls.call(ctx, v, time.Second)
				}, stream.Concurrency(2), stream.Window(tc.window), stream.OrderByKey(key))
				require.NoError(t, err)
				at := map[int]time.Duration{}
				for r := range out {
					require.NoError(t, r.Err)
					at[r.Index] = time.Since(calls.start)
				}
				assert.Equal(t, tc.want, at)
			})
		})
	}
}

// With a Concurrency of 1 the order is the input's and the key function is not called.
func TestOrderByKeyWithOneWorkerIsTheInputOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var keyed atomic.Int32
		key := func(v int) int { keyed.Add(1); return v % 2 }
		calls := newKeyCalls(func(v int) int { return v % 2 })
		out, err := stream.Map(t.Context(), feed(t.Context(), count(6)...), nil, func(ctx context.Context, v int) (int, error) {
			return calls.call(ctx, v, time.Duration(6-v)*time.Second)
		}, stream.OrderByKey(key))
		require.NoError(t, err)
		rs := drain(out)
		assert.Equal(t, []int{0, 1, 2, 3, 4, 5}, indexes(rs))
		assert.Equal(t, []int{0, 10, 20, 30, 40, 50}, values(rs))
		assert.Equal(t, 21*time.Second, time.Since(calls.start))
		assert.Equal(t, int32(0), keyed.Load())
	})
}

// A key function that panics fails its element with a *levee.PanicError, without a call and
// without the fallback; the others go on.
func TestOrderByKeyFailsAnElementWhoseKeyPanics(t *testing.T) {
	var called atomic.Int32
	key := func(v int) int {
		if v == 2 {
			panic("no key")
		}
		return v % 2
	}
	out, err := stream.Map(t.Context(), feed(t.Context(), count(5)...), nil, func(_ context.Context, v int) (int, error) {
		called.Add(1)
		return 10 * v, nil
	}, stream.Concurrency(2), stream.OrderByKey(key),
		stream.WithFallback(func(context.Context, int, error) (int, error) { return -1, nil }))
	require.NoError(t, err)
	rs := drain(out)
	require.Len(t, rs, 5)
	byIndex := map[int]stream.Result[int, int]{}
	for _, r := range rs {
		byIndex[r.Index] = r
	}
	var pe *levee.PanicError
	require.ErrorAs(t, byIndex[2].Err, &pe)
	assert.Equal(t, "no key", pe.Value)
	assert.Equal(t, 2, byIndex[2].In)
	assert.False(t, byIndex[2].Fallback)
	for _, i := range []int{0, 1, 3, 4} {
		require.NoError(t, byIndex[i].Err)
		assert.Equal(t, 10*i, byIndex[i].Value)
	}
	assert.Equal(t, int32(4), called.Load())
}

func TestOrderByKeyIsRefusedWhenInvalid(t *testing.T) {
	fn := func(_ context.Context, v int) (int, error) { return v, nil }
	in := make(chan int)
	for _, tc := range []struct {
		name string
		opts []stream.Option
		want string
	}{
		{"nil key", []stream.Option{stream.OrderByKey[int, string](nil)}, "stream: OrderByKey needs a key function, got nil"},
		{"key of another type", []stream.Option{stream.Concurrency(2), stream.OrderByKey(func(s string) string { return s })},
			"stream: Map needs an OrderByKey function of type func(int) K, got func(string) string"},
		{"nil key, in input order", []stream.Option{stream.OrderByKeyAndInput[int, string](nil)}, "stream: OrderByKeyAndInput needs a key function, got nil"},
		{"key of another type, in input order", []stream.Option{stream.Concurrency(2), stream.OrderByKeyAndInput(func(s string) string { return s })},
			"stream: Map needs an OrderByKeyAndInput function of type func(int) K, got func(string) string"},
		{"in input order with Unordered", []stream.Option{stream.Concurrency(2), stream.Unordered(), stream.OrderByKeyAndInput(func(v int) int { return v })},
			"stream: set OrderByKeyAndInput or Unordered, not both: one sends the Results in input order, the other as their calls end"},
		{"both key orders", []stream.Option{stream.OrderByKey(func(v int) int { return v }), stream.OrderByKeyAndInput(func(v int) int { return v })},
			"stream: set OrderByKey or OrderByKeyAndInput, not both"},
		{"Window below Concurrency", []stream.Option{stream.Concurrency(4), stream.Window(3), stream.OrderByKey(func(v int) int { return v })},
			"stream: Window must be in [4, 65536] (at least Concurrency), got 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := stream.Map(t.Context(), in, nil, fn, tc.opts...)
			assert.EqualError(t, err, tc.want)
			assert.Nil(t, out)
		})
	}
	// Subscribe takes no per-emission option.
	_, err := stream.Subscribe(t.Context(), levee.Patterns{}, func(context.Context, func(int) error) error { return nil },
		stream.OrderByKey(func(v int) int { return v }))
	assert.EqualError(t, err, "stream: option OrderByKey does not apply to Subscribe")
	// Batch's element is the batch.
	batches, err := stream.Batch(t.Context(), in, 2, 0, nil, func(_ context.Context, vs []int) (int, error) { return len(vs), nil },
		stream.Concurrency(2), stream.OrderByKey(func(v int) int { return v }))
	assert.EqualError(t, err, "stream: Batch needs an OrderByKey function of type func([]int) K, got func(int) int")
	assert.Nil(t, batches)
}

// Cancelled with calls running and elements waiting in their keys, the stream sends nothing
// more, every call returns before the output is closed, and nothing is left running.
func TestOrderByKeyCancelledMidStreamLeavesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		bh := newBulkhead(t, 2)
		p := levee.Compose[int]().WithBulkhead(bh)
		key := func(v int) int { return v % 2 }
		calls := newKeyCalls(key)
		out, err := stream.Map(ctx, feed(ctx, count(8)...), p, func(ctx context.Context, v int) (int, error) {
			return calls.call(ctx, v, time.Second)
		}, stream.Concurrency(2), stream.Window(8), stream.OrderByKey(key))
		require.NoError(t, err)
		var got []int
		for r := range out {
			require.NoError(t, r.Err)
			got = append(got, r.Index)
			if len(got) == 2 {
				time.Sleep(500 * time.Millisecond) // elements 2 and 3 are being called, 4..7 wait
				cancel()
			}
		}
		assert.ElementsMatch(t, []int{0, 1}, got)
		assert.Equal(t, 0, calls.now, "every call has returned")
		assert.Equal(t, map[int]time.Duration{0: time.Second, 1: time.Second, 2: 1500 * time.Millisecond, 3: 1500 * time.Millisecond}, calls.end)
		assert.Equal(t, 2, available(bh))
	})
}

// With OrderByKey the watermark never passes an element whose Result the consumer has not
// acknowledged, however far other keys have gone: on random streams, cancelled at a random
// point, it is at every moment at or below the first element not yet acknowledged (below while
// the operator has yet to record a Result it has just sent), and once the output is closed
// exactly there.
func TestOrderByKeyWatermarkNeverPassesAnUnsentElement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rapid.Check(bubbleTB{t}, func(rt *rapid.T) {
			n := rapid.IntRange(0, 30).Draw(rt, "n")
			c := rapid.IntRange(2, 5).Draw(rt, "concurrency")
			window := c + rapid.IntRange(0, 8).Draw(rt, "extra window")
			cancelAfter := rapid.IntRange(0, n+1).Draw(rt, "cancel after")
			keys := make([]int, n)
			d := make([]time.Duration, n)
			for k := range n {
				keys[k] = rapid.IntRange(0, 3).Draw(rt, "key")
				d[k] = time.Duration(rapid.IntRange(1, 30).Draw(rt, "ms")) * time.Millisecond
			}
			key := func(v int) int { return keys[v] }
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			wm := stream.NewWatermark()
			out, err := stream.Map(ctx, feed(ctx, count(n)...), nil, func(ctx context.Context, v int) (int, error) {
				select {
				case <-time.After(d[v]):
					return v, nil
				case <-ctx.Done():
					return 0, ctx.Err()
				}
			}, stream.Concurrency(c), stream.Window(window), stream.Buffer(rapid.IntRange(0, 3).Draw(rt, "buffer")),
				stream.OrderByKey(key), stream.CommitWatermark(wm))
			if err != nil {
				rt.Fatal(err)
			}
			acked := make([]bool, n)
			firstUnacked := func() int {
				for i, a := range acked {
					if !a {
						return i
					}
				}
				return n
			}
			received := 0
			for r := range out {
				if w := wm.Load(); w > firstUnacked() {
					rt.Fatalf("watermark %d past element %d, not acknowledged", w, firstUnacked())
				}
				acked[r.Index] = true
				wm.Ack(r.Index)
				if w := wm.Load(); w > firstUnacked() {
					rt.Fatalf("watermark %d after acknowledging %d, past element %d", w, r.Index, firstUnacked())
				}
				received++
				if received == cancelAfter {
					cancel()
				}
			}
			if received < cancelAfter && received != n {
				rt.Fatalf("%d of %d results", received, n)
			}
			if w := wm.Load(); w != firstUnacked() {
				rt.Fatalf("watermark %d once closed, want %d", w, firstUnacked())
			}
		})
	})
}

// PauseWhileOpen with OrderByKey: element 0 (key A), refused by the open breaker, is held and
// is the HALF_OPEN probe at 5s; element 1 (key B), arriving meanwhile, waits for it to be let
// go, is tried when the probe is admitted, refused by the HALF_OPEN breaker, and held until
// the probe closes it at 6s; then every key goes on in its order. Nothing is answered by the fallback.
func TestOrderByKeyPausesWhileOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb := newBreaker(t, circuitbreaker.Config{SlidingWindowSize: 5, MinimumNumberOfCalls: 5,
			WaitDurationInOpenState: 5 * time.Second, PermittedNumberOfCallsInHalfOpenState: 1})
		require.NoError(t, cb.TransitionToOpenState())
		p := levee.Compose[int]().WithCircuitBreaker(cb)
		key := func(v int) int { return v % 2 } // 0, 2, 4 key A; 1, 3, 5 key B
		calls := newKeyCalls(key)
		in := make(chan int)
		go func() {
			defer close(in)
			in <- 0
			time.Sleep(time.Millisecond)
			for v := 1; v < 6; v++ {
				in <- v
			}
		}()
		out, err := stream.Map(t.Context(), in, p, func(ctx context.Context, v int) (int, error) {
			return calls.call(ctx, v, time.Second)
		}, stream.Concurrency(2), stream.Window(8), stream.OrderByKey(key), stream.PauseWhileOpen(0),
			stream.WithFallback(func(context.Context, int, error) (int, error) { return -1, nil }))
		require.NoError(t, err)
		at := map[int]time.Duration{}
		paused := map[int]time.Duration{}
		for r := range out {
			require.NoError(t, r.Err)
			assert.False(t, r.Fallback)
			assert.Equal(t, 10*r.Index, r.Value)
			at[r.Index] = time.Since(calls.start)
			if r.Paused != 0 {
				paused[r.Index] = r.Paused
			}
		}
		// The probe starts 1ns after the 5s wait, when the breaker lets it through.
		s := time.Second
		assert.Equal(t, map[int]time.Duration{0: 6*s + 1, 1: 7*s + 1, 2: 7*s + 1, 3: 8*s + 1, 4: 8*s + 1, 5: 9*s + 1}, at)
		assert.Equal(t, map[int]time.Duration{0: 5*s + 1, 1: s}, paused)
		assert.Equal(t, circuitbreaker.Closed, cb.State())
	})
}
