package stream_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/levee-go/levee/stream"
)

// TestWatermarkWaitsForAck: a Result in the output buffer, or received and not acknowledged,
// holds the watermark below its element; acknowledgements out of order move it only once the
// oldest pending element is done.
func TestWatermarkWaitsForAck(t *testing.T) {
	ctx := context.Background()
	w := stream.NewWatermark()
	out, err := stream.Map(ctx, feed(ctx, count(4)...), nil,
		func(_ context.Context, v int) (int, error) { return 10 * v, nil }, stream.CommitWatermark(w))
	require.NoError(t, err)
	rs := drain(out) // every result sent, none acknowledged
	require.Equal(t, []int{0, 1, 2, 3}, indexes(rs))
	assert.Equal(t, 0, w.Load())
	w.Ack(2)
	assert.Equal(t, 0, w.Load())
	w.Ack(0)
	assert.Equal(t, 1, w.Load())
	w.Ack(1)
	assert.Equal(t, 3, w.Load())
	w.Ack(1) // nothing left to acknowledge for 1: ignored
	w.Ack(7) // never sent: ignored
	assert.Equal(t, 3, w.Load())
	w.Ack(3)
	assert.Equal(t, 4, w.Load())
}

// TestWatermarkFilterAndFlatMap: an element Filter drops is done once dropped; a FlatMap
// element once each of its values is acknowledged, at once when its slice is empty.
func TestWatermarkFilterAndFlatMap(t *testing.T) {
	ctx := context.Background()
	t.Run("Filter", func(t *testing.T) {
		w := stream.NewWatermark()
		out, err := stream.Filter(ctx, feed(ctx, 0, 1, 2, 3, 4), nil,
			func(_ context.Context, v int) (bool, error) { return v == 1 || v == 4, nil }, stream.CommitWatermark(w))
		require.NoError(t, err)
		rs := drain(out)
		require.Equal(t, []int{1, 4}, indexes(rs))
		assert.Equal(t, 1, w.Load()) // 0 dropped; 1 sent, not acknowledged
		w.Ack(1)
		assert.Equal(t, 4, w.Load()) // 2 and 3 dropped
		w.Ack(4)
		assert.Equal(t, 5, w.Load())
	})
	t.Run("FlatMap", func(t *testing.T) {
		w := stream.NewWatermark()
		out, err := stream.FlatMap(ctx, feed(ctx, 2, 0, 1), nil,
			func(_ context.Context, v int) ([]int, error) { return count(v), nil }, stream.CommitWatermark(w))
		require.NoError(t, err)
		rs := drain(out)
		require.Equal(t, []int{0, 0, 2}, indexes(rs))
		w.Ack(0)
		assert.Equal(t, 0, w.Load()) // one of element 0's two values
		w.Ack(0)
		assert.Equal(t, 2, w.Load()) // element 1's slice is empty
		w.Ack(2)
		assert.Equal(t, 3, w.Load())
	})
}

// TestWatermarkCancelled: an element whose call is cut by a cancellation never counts, though
// later elements are done (Unordered).
func TestWatermarkCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		w := stream.NewWatermark()
		out, err := stream.Map(ctx, feed(ctx, count(3)...), nil, func(ctx context.Context, v int) (int, error) {
			if v == 1 {
				<-ctx.Done()
				return 0, ctx.Err()
			}
			return v, nil
		}, stream.CommitWatermark(w), stream.Concurrency(3), stream.Unordered(), stream.Buffer(0))
		require.NoError(t, err)
		got := map[int]bool{}
		for range 2 {
			r := <-out
			got[r.Index] = true
			w.Ack(r.Index)
		}
		assert.Equal(t, map[int]bool{0: true, 2: true}, got)
		// The stage records an element complete right after its send returns, which may be
		// after the consumer's Ack: let it get there.
		synctest.Wait()
		assert.Equal(t, 1, w.Load())
		cancel()
		assert.Empty(t, drain(out))
		assert.Equal(t, 1, w.Load())
	})
}

// TestWatermarkOptionErrors: a nil or zero Watermark is refused, and so is one another operator
// already has.
func TestWatermarkOptionErrors(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // ends the feeders of the operators refused
	fn := func(_ context.Context, v int) (int, error) { return v, nil }
	_, err := stream.Map(ctx, feed(ctx, 1), nil, fn, stream.CommitWatermark(nil))
	require.EqualError(t, err, "stream: CommitWatermark needs a *Watermark from NewWatermark, got nil")
	_, err = stream.Map(ctx, feed(ctx, 1), nil, fn, stream.CommitWatermark(&stream.Watermark{}))
	require.EqualError(t, err, "stream: CommitWatermark needs a *Watermark from NewWatermark, got a zero Watermark")
	w := stream.NewWatermark()
	out, err := stream.Map(ctx, feed(ctx, 1), nil, fn, stream.CommitWatermark(w))
	require.NoError(t, err)
	_, err = stream.Map(ctx, feed(ctx, 1), nil, fn, stream.CommitWatermark(w))
	require.True(t, errors.Is(err, stream.ErrWatermarkInUse))
	require.EqualError(t, err, "stream: CommitWatermark: the Watermark is already given to another operator")
	require.Len(t, drain(out), 1)
}

// TestZeroWatermark: the methods of a zero or nil Watermark do nothing rather than panic.
func TestZeroWatermark(t *testing.T) {
	for _, w := range []*stream.Watermark{{}, nil} {
		w.Ack(0)
		w.AckNext()
		assert.Equal(t, 0, w.Load())
	}
}

// TestWatermarkProperty: over random sizes, concurrency, window, buffer, order, operator, call
// durations, acknowledgement order and cancellation time, the watermark never passes the
// first element the consumer has not received and acknowledged every Result of (nor one
// Filter drops before its call has returned), never goes down, and reaches n when the stream
// runs to its end and every Result is acknowledged.
func TestWatermarkProperty(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rapid.Check(bubbleTB{t}, func(rt *rapid.T) {
			n := rapid.IntRange(0, 40).Draw(rt, "n")
			c := rapid.IntRange(1, 6).Draw(rt, "concurrency")
			ordered := rapid.Bool().Draw(rt, "ordered")
			op := rapid.SampledFrom([]string{"Map", "Filter", "FlatMap"}).Draw(rt, "op")
			durs := rapid.SliceOfN(rapid.IntRange(0, 20), n, n).Draw(rt, "call(ms)")
			cancelAt := -1 // never
			if rapid.Bool().Draw(rt, "cancel") {
				cancelAt = rapid.IntRange(0, 200).Draw(rt, "cancelAt(ms)")
			}
			inOrder := rapid.Bool().Draw(rt, "AckNext") // else Ack(index) in any order
			w := stream.NewWatermark()
			ack := func(held []int, k int) {
				if inOrder {
					w.AckNext()
				} else {
					w.Ack(held[k])
				}
			}
			opts := []stream.Option{stream.Concurrency(c), stream.CommitWatermark(w),
				stream.Buffer(rapid.IntRange(0, 8).Draw(rt, "buffer"))}
			if !ordered {
				opts = append(opts, stream.Unordered())
			} else if rapid.Bool().Draw(rt, "window") {
				opts = append(opts, stream.Window(c+rapid.IntRange(0, 8).Draw(rt, "window-c")))
			}
			want := make([]int, n) // Results element v yields
			for v := range want {
				switch op {
				case "Map":
					want[v] = 1
				case "Filter":
					want[v] = min(1, v%3)
				case "FlatMap":
					want[v] = v % 4
				}
			}
			returned := make([]chan struct{}, n) // closed when element v's call returns
			for v := range returned {
				returned[v] = make(chan struct{})
			}
			sleep := func(ctx context.Context, v int) error {
				defer close(returned[v])
				select {
				case <-time.After(time.Duration(durs[v]) * time.Millisecond):
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			}

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if cancelAt >= 0 {
				time.AfterFunc(time.Duration(cancelAt)*time.Millisecond, cancel)
			}
			in := feed(ctx, count(n)...)
			var out <-chan stream.Result[int, int]
			var err error
			switch op {
			case "Map":
				out, err = stream.Map(ctx, in, nil, func(ctx context.Context, v int) (int, error) {
					return v, sleep(ctx, v)
				}, opts...)
			case "Filter":
				out, err = stream.Filter(ctx, in, nil, func(ctx context.Context, v int) (bool, error) {
					return v%3 != 0, sleep(ctx, v)
				}, opts...)
			case "FlatMap":
				out, err = stream.FlatMap(ctx, in, nil, func(ctx context.Context, v int) ([]int, error) {
					return count(v % 4), sleep(ctx, v)
				}, opts...)
			}
			if err != nil {
				rt.Fatal(err)
			}

			acked := make([]int, n)
			var held []int // indexes received, not yet acknowledged
			last := 0
			check := func(where string) {
				got := w.Load()
				if got < last {
					rt.Fatalf("%s: watermark went down from %d to %d", where, last, got)
				}
				last = got
				bound := n
				for v := range n {
					pending := acked[v] < want[v]
					if want[v] == 0 {
						select {
						case <-returned[v]:
						default:
							pending = true
						}
					}
					if pending {
						bound = v
						break
					}
				}
				if got > bound {
					rt.Fatalf("%s: watermark %d passes element %d (acknowledged %v of %v)", where, got, bound, acked, want)
				}
			}
			failed := false
			for r := range out {
				check("received")
				if r.Err != nil {
					failed = true // a call cut by the cancellation
				}
				if pause := rapid.IntRange(0, 3).Draw(rt, "consumer(ms)"); pause > 0 {
					time.Sleep(time.Duration(pause) * time.Millisecond)
					check("slept")
				}
				held = append(held, r.Index)
				for len(held) > 0 && rapid.Bool().Draw(rt, "ack") {
					k := 0
					if !inOrder {
						k = rapid.IntRange(0, len(held)-1).Draw(rt, "which")
					}
					acked[held[k]]++
					ack(held, k)
					held = append(held[:k], held[k+1:]...)
					check("acked")
				}
			}
			for k, i := range held {
				acked[i]++
				ack(held, k)
				check("acked at the end")
			}
			if cancelAt < 0 && !failed {
				if got := w.Load(); got != n {
					rt.Fatalf("ran to the end: watermark %d, want %d", got, n)
				}
			}
		})
	})
}
