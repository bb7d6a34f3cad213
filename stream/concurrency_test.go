package stream_test

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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/stream"
)

func TestMapAtMostConcurrencyCallsInFlight(t *testing.T) {
	for _, unordered := range []bool{false, true} {
		for _, c := range []int{1, 2, 5, 16} {
			t.Run(fmt.Sprintf("concurrency %d unordered %v", c, unordered), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					var f inflight
					opts := []stream.Option{stream.Concurrency(c)}
					if unordered {
						opts = append(opts, stream.Unordered())
					}
					out, err := stream.Map(ctx, feed(ctx, count(50)...), nil, func(_ context.Context, v int) (int, error) {
						f.enter()
						defer f.leave()
						time.Sleep(time.Duration(v%5+1) * time.Millisecond)
						return v, nil
					}, opts...)
					require.NoError(t, err)
					assert.Len(t, drain(out), 50)
					assert.Equal(t, int64(c), f.max.Load())
				})
			})
		}
	}
}

// Concurrency n takes n + 1 goroutines: a dispatcher and n workers, each of which calls and
// sends; Concurrency 1 takes one. Batch adds its batcher.
func TestOperatorGoroutines(t *testing.T) {
	for _, tc := range []struct {
		name  string
		c     int
		batch bool
		want  int
	}{
		{"Map concurrency 1", 1, false, 1},
		{"Map concurrency 2", 2, false, 3},
		{"Map concurrency 7", 7, false, 8},
		{"Batch concurrency 1", 1, true, 2},
		{"Batch concurrency 3", 3, true, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				in := make(chan int) // fed from this goroutine: no feeder goroutine to count
				release := make(chan struct{})
				var running atomic.Int64
				call := func(context.Context) (int, error) {
					running.Add(1)
					<-release
					return 0, nil
				}
				before := bubbleGoroutines()
				var out <-chan struct{}
				if tc.batch {
					o, err := stream.Batch(ctx, in, 1, 0, nil, func(ctx context.Context, _ []int) (int, error) { return call(ctx) },
						stream.Concurrency(tc.c))
					require.NoError(t, err)
					out = done(o)
				} else {
					o, err := stream.Map(ctx, in, nil, func(ctx context.Context, _ int) (int, error) { return call(ctx) },
						stream.Concurrency(tc.c))
					require.NoError(t, err)
					out = done(o)
				}
				for i := range tc.c {
					in <- i
				}
				synctest.Wait()
				assert.Equal(t, int64(tc.c), running.Load())
				assert.Equal(t, tc.want+1, bubbleGoroutines()-before, "operator goroutines + the test's drain")
				close(release)
				close(in)
				<-out
				cancel()
				synctest.Wait()
				assert.Equal(t, before, bubbleGoroutines())
			})
		})
	}
}

// done drains ch in a goroutine and returns a channel closed once ch is.
func done[T any](ch <-chan T) <-chan struct{} {
	d := make(chan struct{})
	go func() {
		for range ch {
		}
		close(d)
	}()
	return d
}

// A consumer that does not read holds the operator: exactly Concurrency + Buffer elements are
// taken and called, then nothing moves until it reads again.
func TestMapBackpressure(t *testing.T) {
	for _, unordered := range []bool{false, true} {
		for _, tc := range []struct{ c, buffer int }{{1, 0}, {1, 3}, {4, 0}, {4, 2}} {
			t.Run(fmt.Sprintf("concurrency %d buffer %d unordered %v", tc.c, tc.buffer, unordered), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					var taken, calls atomic.Int64
					in := make(chan int)
					go func() {
						defer close(in)
						for i := range 100 {
							select {
							case in <- i:
								taken.Add(1)
							case <-ctx.Done():
								return
							}
						}
					}()
					opts := []stream.Option{stream.Concurrency(tc.c), stream.Buffer(tc.buffer)}
					if unordered {
						opts = append(opts, stream.Unordered())
					}
					out, err := stream.Map(ctx, in, nil, func(_ context.Context, v int) (int, error) {
						calls.Add(1)
						return v, nil
					}, opts...)
					require.NoError(t, err)
					time.Sleep(time.Hour)
					synctest.Wait()
					want := int64(tc.c + tc.buffer)
					assert.Equal(t, want, calls.Load())
					assert.Equal(t, want, taken.Load())

					// Each result read lets exactly one more element in.
					for i := range 10 {
						<-out
						synctest.Wait()
						assert.Equal(t, want+int64(i)+1, calls.Load())
					}
				})
			})
		}
	}
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
