package operators_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/levee-go/levee/operators"
)

// TestWatermarkMapResultsAck: Results acknowledged by index, out of order, move the watermark
// only past the oldest pending element; items in the output buffer do not count.
func TestWatermarkMapResultsAck(t *testing.T) {
	w := operators.NewWatermark()
	m, err := operators.MapResults(nil, func(_ context.Context, v int) (int, error) { return 10 * v, nil },
		operators.CommitWatermark(w))
	require.NoError(t, err)
	shown, items := observe(m(newProbe(ints(3)...).Observable()))
	require.Len(t, shown, 3)
	assert.Equal(t, 0, w.Load())
	w.Ack(items[2].V.(operators.Result[int, int]).Index)
	assert.Equal(t, 0, w.Load())
	w.Ack(items[0].V.(operators.Result[int, int]).Index)
	assert.Equal(t, 1, w.Load())
	w.Ack(items[1].V.(operators.Result[int, int]).Index)
	assert.Equal(t, 3, w.Load())
}

// TestWatermarkAckNext: with Map under ContinueOnError, each item received, an element's error
// item and a forwarded upstream error included, is acknowledged in turn; with Filter a dropped
// element is done once dropped.
func TestWatermarkAckNext(t *testing.T) {
	t.Run("Map", func(t *testing.T) {
		w := operators.NewWatermark()
		m, err := operators.Map(nil, func(_ context.Context, v int) (int, error) {
			if v == 2 {
				return 0, errBoom
			}
			return 10 * v, nil
		}, operators.CommitWatermark(w), operators.ContinueOnError())
		require.NoError(t, err)
		shown, _ := observe(m(newProbe(1, 2, errors.New("up"), 3).Observable()))
		require.Equal(t, []string{"10", "E:boom", "E:up", "30"}, shown)
		var loads []int
		for range shown {
			w.AckNext()
			loads = append(loads, w.Load())
		}
		assert.Equal(t, []int{1, 2, 2, 3}, loads)
		w.AckNext() // nothing left: ignored
		assert.Equal(t, 3, w.Load())
	})
	t.Run("Filter", func(t *testing.T) {
		w := operators.NewWatermark()
		f, err := operators.Filter(nil, func(_ context.Context, v int) (bool, error) { return v%2 == 0, nil },
			operators.CommitWatermark(w))
		require.NoError(t, err)
		shown, _ := observe(f(newProbe(ints(5)...).Observable()))
		require.Equal(t, []string{"2", "4"}, shown)
		assert.Equal(t, 1, w.Load()) // element 0 (1) dropped; element 1 (2) not acknowledged
		w.AckNext()
		assert.Equal(t, 3, w.Load())
		w.AckNext()
		assert.Equal(t, 5, w.Load())
	})
}

// TestWatermarkSecondSubscription: the watermark follows the first subscription; a second one
// emits one error item; a second operator given the same Watermark is refused.
func TestWatermarkSecondSubscription(t *testing.T) {
	w := operators.NewWatermark()
	m, err := operators.Map(nil, func(_ context.Context, v int) (int, error) { return v, nil }, operators.CommitWatermark(w))
	require.NoError(t, err)
	obs := m(newProbe(ints(2)...).Observable())
	shown, _ := observe(obs)
	require.Equal(t, []string{"1", "2"}, shown)
	_, items := observe(obs)
	require.Len(t, items, 1)
	require.ErrorIs(t, items[0].E, operators.ErrWatermarkInUse)
	assert.EqualError(t, items[0].E, "operators: Map observed again: CommitWatermark: the Watermark is already given to another operator")
	_, err = operators.Filter(nil, func(context.Context, int) (bool, error) { return true, nil }, operators.CommitWatermark(w))
	require.EqualError(t, err, "operators: CommitWatermark: the Watermark is already given to another operator")
	_, err = operators.Map(nil, func(_ context.Context, v int) (int, error) { return v, nil }, operators.CommitWatermark(nil))
	require.EqualError(t, err, "operators: CommitWatermark needs a *Watermark from NewWatermark, got nil")
}

// TestZeroWatermark: a zero Watermark is refused by CommitWatermark, and its methods, as a
// nil one's, do nothing rather than panic.
func TestZeroWatermark(t *testing.T) {
	_, err := operators.Map(nil, func(_ context.Context, v int) (int, error) { return v, nil }, operators.CommitWatermark(&operators.Watermark{}))
	require.EqualError(t, err, "operators: CommitWatermark needs a *Watermark from NewWatermark, got a zero Watermark")
	for _, w := range []*operators.Watermark{{}, nil} {
		w.Ack(0)
		w.AckNext()
		assert.Equal(t, 0, w.Load())
	}
}

// TestWatermarkProperty: over random sizes, concurrency, window, buffer, order, operator, call
// durations, acknowledgement order (MapResults) and cancellation time, the watermark never
// passes the first element the consumer has not received and acknowledged every item of,
// never goes down, and reaches n when the subscription runs to its end and every item is
// acknowledged.
func TestWatermarkProperty(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rapid.Check(bubbleTB{t}, func(rt *rapid.T) {
			n := rapid.IntRange(0, 40).Draw(rt, "n")
			c := rapid.IntRange(1, 6).Draw(rt, "concurrency")
			ordered := rapid.Bool().Draw(rt, "ordered")
			op := rapid.SampledFrom([]string{"Map", "MapResults", "FlatMap"}).Draw(rt, "op")
			durs := rapid.SliceOfN(rapid.IntRange(0, 20), n, n).Draw(rt, "call(ms)")
			cancelAt := -1 // never
			if rapid.Bool().Draw(rt, "cancel") {
				cancelAt = rapid.IntRange(0, 200).Draw(rt, "cancelAt(ms)")
			}
			w := operators.NewWatermark()
			opts := []operators.Option{operators.Concurrency(c), operators.CommitWatermark(w),
				operators.Buffer(rapid.IntRange(0, 8).Draw(rt, "buffer"))}
			if !ordered {
				opts = append(opts, operators.Unordered())
			} else if rapid.Bool().Draw(rt, "window") {
				opts = append(opts, operators.Window(c+rapid.IntRange(0, 8).Draw(rt, "window-c")))
			}
			want := make([]int, n) // items element i (value i+1) yields
			for i := range want {
				want[i] = 1
				if op == "FlatMap" {
					want[i] = (i + 1) % 3
				}
			}
			returned := make([]chan struct{}, n) // closed when element i's call returns
			for i := range returned {
				returned[i] = make(chan struct{})
			}
			sleep := func(ctx context.Context, v int) error {
				defer close(returned[v-1])
				select {
				case <-time.After(time.Duration(durs[v-1]) * time.Millisecond):
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			var oper operators.Operator
			var err error
			switch op {
			case "Map":
				oper, err = operators.Map(nil, func(ctx context.Context, v int) (int, error) { return v, sleep(ctx, v) }, opts...)
			case "MapResults":
				oper, err = operators.MapResults(nil, func(ctx context.Context, v int) (int, error) { return v, sleep(ctx, v) }, opts...)
			case "FlatMap":
				oper, err = operators.FlatMap(nil, func(ctx context.Context, v int) ([]int, error) {
					vs := make([]int, v%3)
					for k := range vs {
						vs[k] = v
					}
					return vs, sleep(ctx, v)
				}, opts...)
			}
			if err != nil {
				rt.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if cancelAt >= 0 {
				time.AfterFunc(time.Duration(cancelAt)*time.Millisecond, cancel)
			}

			acked := make([]int, n)
			last := 0
			check := func(where string) {
				got := w.Load()
				if got < last {
					rt.Fatalf("%s: watermark went down from %d to %d", where, last, got)
				}
				last = got
				bound := n
				for i := range n {
					pending := acked[i] < want[i]
					if want[i] == 0 {
						select {
						case <-returned[i]:
						default:
							pending = true
						}
					}
					if pending {
						bound = i
						break
					}
				}
				if got > bound {
					rt.Fatalf("%s: watermark %d passes element %d (acknowledged %v of %v)", where, got, bound, acked, want)
				}
			}
			var order []int // element of each item received, in order, for AckNext
			var held []int  // MapResults: indexes received, not yet acknowledged
			next := 0       // AckNext: items acknowledged
			failed := false
			for it := range oper(newProbe(ints(n)...).Observable()).Observe(rxgo.WithContext(ctx)) {
				check("received")
				if it.E != nil {
					failed = true // a call cut by the cancellation; Map and FlatMap stop after it
					order = append(order, -1)
					continue
				}
				if pause := rapid.IntRange(0, 3).Draw(rt, "consumer(ms)"); pause > 0 {
					time.Sleep(time.Duration(pause) * time.Millisecond)
					check("slept")
				}
				switch r := it.V.(type) {
				case operators.Result[int, int]:
					if r.Err != nil {
						failed = true
					}
					held = append(held, r.Index)
					for len(held) > 0 && rapid.Bool().Draw(rt, "ack") {
						k := rapid.IntRange(0, len(held)-1).Draw(rt, "which")
						acked[held[k]]++
						w.Ack(held[k])
						held = append(held[:k], held[k+1:]...)
						check("acked")
					}
				default:
					order = append(order, it.V.(int)-1) // each value names its element

					for next < len(order) && rapid.Bool().Draw(rt, "ack") {
						if order[next] >= 0 {
							acked[order[next]]++
						}
						next++
						w.AckNext()
						check("acked next")
					}
				}
			}
			for _, i := range held {
				acked[i]++
				w.Ack(i)
				check("acked at the end")
			}
			for ; next < len(order); next++ {
				if order[next] >= 0 {
					acked[order[next]]++
				}
				w.AckNext()
				check("acked next at the end")
			}
			cancel()
			if cancelAt < 0 && !failed {
				if got := w.Load(); got != n {
					rt.Fatalf("ran to the end: watermark %d, want %d", got, n)
				}
			}
		})
	})
}

// bubbleTB hides *testing.T from rapid, which would otherwise call t.Deadline, a call testing
// forbids inside a synctest bubble.
type bubbleTB struct{ testing.TB }
