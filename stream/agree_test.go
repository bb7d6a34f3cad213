package stream_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/levee-go/levee/stream"
)

// The order options that agree are accepted together, and those that contradict each other
// are refused; the operators module's test of the same name runs the same table. Three
// elements, keys A, A, B, calls of 30ms, 10ms and 5ms, three workers: in input order the
// output is 0, 1, 2; as calls end, 2, 1, 0; by key, 2, 0, 1, element 1 waiting for element 0
// of its key (called at 30ms). OrderByKeyAndInput calls as by key and sends as in input order.
func TestOrderOptionsThatAgreeAreAccepted(t *testing.T) {
	keys := []string{"A", "A", "B"}
	key := func(v int) string { return keys[v] }
	d := []time.Duration{30 * time.Millisecond, 10 * time.Millisecond, 5 * time.Millisecond}
	for _, tc := range []struct {
		name  string
		opts  []stream.Option
		order []int         // the elements in the order sent
		start time.Duration // when element 1 was called
		err   string        // without the package's prefix; "" when accepted
	}{
		{"input order", nil, []int{0, 1, 2}, 0, ""},
		{"Unordered", []stream.Option{stream.Unordered()}, []int{2, 1, 0}, 0, ""},
		{"Window and Unordered", []stream.Option{stream.Window(8), stream.Unordered()}, []int{2, 1, 0}, 0, ""},
		{"OrderByKey", []stream.Option{stream.OrderByKey(key)}, []int{2, 0, 1}, 30 * time.Millisecond, ""},
		{"OrderByKey and Unordered", []stream.Option{stream.OrderByKey(key), stream.Unordered()}, []int{2, 0, 1}, 30 * time.Millisecond, ""},
		{"Unordered, OrderByKey and Window", []stream.Option{stream.Unordered(), stream.OrderByKey(key), stream.Window(8)}, []int{2, 0, 1}, 30 * time.Millisecond, ""},
		{"OrderByKeyAndInput", []stream.Option{stream.OrderByKeyAndInput(key)}, []int{0, 1, 2}, 30 * time.Millisecond, ""},
		{"OrderByKeyAndInput and Window", []stream.Option{stream.OrderByKeyAndInput(key), stream.Window(8)}, []int{0, 1, 2}, 30 * time.Millisecond, ""},
		{"OrderByKeyAndInput and Unordered", []stream.Option{stream.OrderByKeyAndInput(key), stream.Unordered()}, nil, 0,
			"set OrderByKeyAndInput or Unordered, not both: one sends the Results in input order, the other as their calls end"},
		{"OrderByKey and OrderByKeyAndInput", []stream.Option{stream.OrderByKey(key), stream.OrderByKeyAndInput(key)}, nil, 0,
			"set OrderByKey or OrderByKeyAndInput, not both"},
		{"Window below Concurrency and Unordered", []stream.Option{stream.Window(2), stream.Unordered()}, nil, 0,
			"Window must be in [3, 65536] (at least Concurrency), got 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				began := make([]time.Duration, len(keys))
				in := make(chan int, len(keys))
				for v := range keys {
					in <- v
				}
				close(in)
				out, err := stream.Map(t.Context(), in, nil, func(ctx context.Context, v int) (int, error) {
					began[v] = time.Since(start)
					time.Sleep(d[v])
					return 10 * v, nil
				}, append([]stream.Option{stream.Concurrency(3)}, tc.opts...)...)
				if tc.err != "" {
					assert.EqualError(t, err, "stream: "+tc.err)
					assert.Nil(t, out)
					return
				}
				require.NoError(t, err)
				var order []int
				for r := range out {
					require.NoError(t, r.Err)
					assert.Equal(t, 10*r.In, r.Value)
					order = append(order, r.Index)
				}
				assert.Equal(t, tc.order, order)
				assert.Equal(t, tc.start, began[1])
			})
		})
	}
}

// On random streams of random keys and call times, OrderByKeyAndInput calls the elements of
// each key one at a time in input order, never more than Concurrency at once, sends every
// Result in input order, exactly once, and takes no more than the Window of elements from the
// input ahead of the Results sent.
func TestOrderByKeyAndInputKeepsBothOrdersUnderRandomLatencies(t *testing.T) {
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
			calls := newKeyCalls(key)
			in := make(chan int)
			taken := make(chan int, n+1) // each element, once the stream has taken it
			go func() {
				defer close(in)
				for v := range n {
					in <- v
					taken <- v
				}
			}()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out, err := stream.Map(ctx, in, nil, func(ctx context.Context, v int) (int, error) {
				return calls.call(ctx, v, d[v])
			}, stream.Concurrency(c), stream.Window(window), stream.Buffer(buffer), stream.OrderByKeyAndInput(key))
			if err != nil {
				rt.Fatal(err)
			}
			next := 0
			for r := range out {
				if r.Err != nil || r.Index != next || r.In != next || r.Value != 10*next {
					rt.Fatalf("Result %+v, want element %d", r, next)
				}
				// Elements taken beyond the next+1 Results read: at most the window, plus
				// the output's buffer.
				for len(taken) > 0 {
					if v := <-taken; v+1 > next+1+window+buffer {
						rt.Fatalf("element %d taken with %d Results read (window %d, buffer %d)", v, next, window, buffer)
					}
				}
				next++
			}
			if next != n {
				rt.Fatalf("%d Results for %d elements", next, n)
			}
			prevEnd := map[int]time.Duration{}
			for v := range n {
				if calls.began[v] < prevEnd[keys[v]] {
					rt.Fatalf("element %d started before the previous one of key %d ended", v, keys[v])
				}
				prevEnd[keys[v]] = calls.end[v]
			}
			if calls.most > c || calls.mostPerKey > 1 {
				rt.Fatalf("%d calls at once (concurrency %d), %d of one key", calls.most, c, calls.mostPerKey)
			}
		})
	})
}
