package operators_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/levee-go/levee/operators"
)

// The order options that agree are accepted together, and those that contradict each other
// are refused; the stream package's test of the same name runs the same table. Three values,
// 1, 2 and 3, keys A, A, B, calls of 30ms, 10ms and 5ms, three workers: in upstream order the
// output is 1, 2, 3; as calls end, 3, 2, 1; by key, 3, 1, 2, value 2 waiting for value 1 of
// its key (called at 30ms). OrderByKeyAndInput calls as by key and emits in upstream order.
func TestOrderOptionsThatAgreeAreAccepted(t *testing.T) {
	keys := map[int]string{1: "A", 2: "A", 3: "B"}
	key := func(v int) string { return keys[v] }
	d := map[int]time.Duration{1: 30 * time.Millisecond, 2: 10 * time.Millisecond, 3: 5 * time.Millisecond}
	for _, tc := range []struct {
		name  string
		opts  []operators.Option
		order []int         // the values in the order emitted
		start time.Duration // when value 2 was called
		err   string        // without the package's prefix; "" when accepted
	}{
		{"input order", nil, []int{1, 2, 3}, 0, ""},
		{"Unordered", []operators.Option{operators.Unordered()}, []int{3, 2, 1}, 0, ""},
		{"Window and Unordered", []operators.Option{operators.Window(8), operators.Unordered()}, []int{3, 2, 1}, 0, ""},
		{"OrderByKey", []operators.Option{operators.OrderByKey(key)}, []int{3, 1, 2}, 30 * time.Millisecond, ""},
		{"OrderByKey and Unordered", []operators.Option{operators.OrderByKey(key), operators.Unordered()}, []int{3, 1, 2}, 30 * time.Millisecond, ""},
		{"Unordered, OrderByKey and Window", []operators.Option{operators.Unordered(), operators.OrderByKey(key), operators.Window(8)}, []int{3, 1, 2}, 30 * time.Millisecond, ""},
		{"OrderByKeyAndInput", []operators.Option{operators.OrderByKeyAndInput(key)}, []int{1, 2, 3}, 30 * time.Millisecond, ""},
		{"OrderByKeyAndInput and Window", []operators.Option{operators.OrderByKeyAndInput(key), operators.Window(8)}, []int{1, 2, 3}, 30 * time.Millisecond, ""},
		{"OrderByKeyAndInput and Unordered", []operators.Option{operators.OrderByKeyAndInput(key), operators.Unordered()}, nil, 0,
			"set OrderByKeyAndInput or Unordered, not both: one sends the Results in input order, the other as their calls end"},
		{"OrderByKey and OrderByKeyAndInput", []operators.Option{operators.OrderByKey(key), operators.OrderByKeyAndInput(key)}, nil, 0,
			"set OrderByKey or OrderByKeyAndInput, not both"},
		{"Window below Concurrency and Unordered", []operators.Option{operators.Window(2), operators.Unordered()}, nil, 0,
			"Window must be in [3, 65536] (at least Concurrency), got 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				began := map[int]time.Duration{}
				mu := make(chan struct{}, 1) // guards began
				op, err := operators.MapResults(nil, func(ctx context.Context, v int) (int, error) {
					mu <- struct{}{}
					began[v] = time.Since(start)
					<-mu
					time.Sleep(d[v])
					return 10 * v, nil
				}, append([]operators.Option{operators.Concurrency(3)}, tc.opts...)...)
				if tc.err != "" {
					assert.EqualError(t, err, "operators: "+tc.err)
					assert.Nil(t, op)
					return
				}
				require.NoError(t, err)
				var order []int
				for it := range op(newProbe(ints(3)...).Observable()).Observe(rxgo.WithContext(t.Context())) {
					require.NoError(t, it.E)
					r := it.V.(operators.Result[int, int])
					require.NoError(t, r.Err)
					assert.Equal(t, 10*r.In, r.Value)
					order = append(order, r.In)
				}
				assert.Equal(t, tc.order, order)
				mu <- struct{}{}
				assert.Equal(t, tc.start, began[2])
				<-mu
			})
		})
	}
}

// On random upstreams of random keys and call times, OrderByKeyAndInput calls the elements of
// each key one at a time in upstream order, never more than Concurrency at once, and emits
// every element in upstream order, exactly once.
func TestOrderByKeyAndInputKeepsBothOrdersUnderRandomLatencies(t *testing.T) {
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
			}, operators.Concurrency(c), operators.Window(window), operators.OrderByKeyAndInput(key))
			if err != nil {
				rt.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			next := 1
			for it := range m(newProbe(ints(n)...).Observable()).Observe(rxgo.WithContext(ctx)) {
				r, _ := it.V.(operators.Result[int, int])
				if it.E != nil || r.Err != nil || r.In != next || r.Index != next-1 || r.Value != 10*next {
					rt.Fatalf("item %+v, want value %d", it, next)
				}
				next++
			}
			if next != n+1 {
				rt.Fatalf("%d items for %d elements", next-1, n)
			}
			prevEnd := map[int]time.Duration{}
			for v := 1; v <= n; v++ {
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
