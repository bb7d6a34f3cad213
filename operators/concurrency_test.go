package operators_test

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/operators"
)

func TestMapConcurrencyKeepsInputOrderAndBoundsCallsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var inFlight, maxInFlight atomic.Int32
		fn := func(ctx context.Context, v int) (int, error) {
			n := inFlight.Add(1)
			for {
				m := maxInFlight.Load()
				if n <= m || maxInFlight.CompareAndSwap(m, n) {
					break
				}
			}
			defer inFlight.Add(-1)
			time.Sleep(time.Duration(10-v) * time.Millisecond) // later elements finish first
			return v, nil
		}
		m := mustOp(t)(operators.Map(nil, fn, operators.Concurrency(4)))
		got, _ := observe(m(rxgo.Just(ints(9)...)()))
		assert.Equal(t, []string{"1", "2", "3", "4", "5", "6", "7", "8", "9"}, got)
		assert.Equal(t, int32(4), maxInFlight.Load())
	})
}

func TestMapUnorderedEmitsAsCallsEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fn := func(_ context.Context, v int) (int, error) {
			time.Sleep(time.Duration(4-v) * 10 * time.Millisecond)
			return v, nil
		}
		m := mustOp(t)(operators.MapResults(nil, fn, operators.Concurrency(3), operators.Unordered()))
		_, items := observe(m(rxgo.Just(1, 2, 3)()))
		var order []int
		for _, it := range items {
			r := it.V.(operators.Result[int, int])
			assert.Equal(t, r.In-1, r.Index)
			order = append(order, r.Value)
		}
		assert.Equal(t, []int{3, 2, 1}, order)
	})
}

func TestMapConcurrentForwardsUpstreamErrorsInPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fn := func(_ context.Context, v int) (int, error) {
			time.Sleep(time.Duration(5-v) * time.Millisecond)
			return 2 * v, nil
		}
		m := mustOp(t)(operators.Map(nil, fn, operators.Concurrency(3), operators.ContinueOnError()))
		got, _ := observe(m(newProbe(1, errBoom, 3, 4).Observable()))
		assert.Equal(t, []string{"2", "E:boom", "6", "8"}, got)
	})
}

func TestMapConcurrentStopOnErrorStopsInInputOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fn := func(_ context.Context, v int) (int, error) {
			if v == 3 || v == 5 {
				time.Sleep(time.Duration(10-v) * time.Millisecond) // 5 fails first in time
				return 0, fmt.Errorf("bad %d", v)
			}
			return v, nil
		}
		p := newProbe(ints(8)...)
		m := mustOp(t)(operators.Map(nil, fn, operators.Concurrency(4), operators.StopOnError()))
		got, _ := observe(m(p.Observable()))
		assert.Equal(t, []string{"1", "2", "E:stream: stopped at element 2 (3): bad 3"}, got)
		synctest.Wait()
		assert.Equal(t, int32(1), p.cancelled.Load())
	})
}

func TestMapSlowConsumerSlowsTheCalls(t *testing.T) {
	for _, tc := range []struct {
		n    int
		opts []operators.Option
		want int32 // calls made while nothing is read: the reorder window, plus the buffer
	}{
		{1, []operators.Option{operators.Buffer(0)}, 1},
		{3, []operators.Option{operators.Buffer(0)}, 3},
		{1, nil, 1 + 64},
		{3, nil, 3 + 64},
		{3, []operators.Option{operators.Buffer(10), operators.Window(8)}, 8 + 10},
	} {
		t.Run(fmt.Sprint("concurrency ", tc.n, ", ", tc.want, " calls"), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int32
				m := mustOp(t)(operators.Map(nil, func(_ context.Context, v int) (int, error) {
					calls.Add(1)
					return v, nil
				}, append([]operators.Option{operators.Concurrency(tc.n)}, tc.opts...)...))
				ctx, cancel := context.WithCancel(context.Background())
				ch := m(rxgo.Just(ints(200)...)()).Observe(rxgo.WithContext(ctx))
				synctest.Wait()
				assert.Equal(t, tc.want, calls.Load(), "nothing read: the reorder window and the buffer are called")
				<-ch
				synctest.Wait()
				assert.Equal(t, tc.want+1, calls.Load())
				cancel()
				for range ch {
				}
			})
		})
	}
}

func TestMapGoroutinesPerSubscriptionAreBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		m := mustOp(t)(operators.Map(nil, func(ctx context.Context, v int) (int, error) {
			<-release
			return v, nil
		}, operators.Concurrency(4)))
		synctest.Wait()
		before := bubbleGoroutines()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ch := m(rxgo.Just(ints(50)...)()).Observe(rxgo.WithContext(ctx))
		synctest.Wait()
		// The subscription's goroutine (the dispatcher), 4 workers, and Just's sender.
		assert.Equal(t, 4+1+1, bubbleGoroutines()-before)
		close(release)
		n := 0
		for range ch {
			n++
		}
		assert.Equal(t, 50, n)
		synctest.Wait()
		assert.Equal(t, before, bubbleGoroutines())
	})
}

func TestMapBufferLetsTheOperatorRunAhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		m := mustOp(t)(operators.Map(nil, func(_ context.Context, v int) (int, error) {
			calls.Add(1)
			return v, nil
		}, operators.Buffer(5)))
		ctx, cancel := context.WithCancel(context.Background())
		ch := m(rxgo.Just(ints(20)...)()).Observe(rxgo.WithContext(ctx))
		synctest.Wait()
		assert.Equal(t, int32(6), calls.Load(), "5 results buffered, the 6th waiting to be sent")
		cancel()
		for range ch {
		}
	})
}

// bubbleGoroutines counts the goroutines of the calling goroutine's synctest bubble.
// runtime.NumGoroutine counts the whole process, where a goroutine of an earlier test ending,
// or a finalizer running, changes the count in the middle of a test.
func bubbleGoroutines() int {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	header := func(stack []byte) string { // "goroutine 7 [running, synctest bubble 3]:"
		line, _, _ := bytes.Cut(stack, []byte("\n"))
		return string(line)
	}
	_, bubble, ok := strings.Cut(header(buf), ", synctest bubble ") // the caller's stack comes first
	if !ok {
		panic("bubbleGoroutines called outside a synctest bubble")
	}
	n := 0
	for _, stack := range bytes.Split(buf, []byte("\n\n")) {
		if _, b, ok := strings.Cut(header(stack), ", synctest bubble "); ok && b == bubble {
			n++
		}
	}
	return n
}
