package stream_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/stream"
)

// One slow element (the first) holds the ordered output: the workers go on with the elements
// after it until the window is full, then the stage waits. With a window of w, the slow one
// and exactly w-1 elements after it are started and taken from the input, and nothing is sent.
func TestMapWindowBoundsTheElementsStartedPastASlowOne(t *testing.T) {
	for _, tc := range []struct {
		concurrency int
		opts        []stream.Option
		wantStarted []int
	}{
		{2, nil, []int{0, 1}}, // the default window is the concurrency
		{2, []stream.Option{stream.Window(5)}, []int{0, 1, 2, 3, 4}},
		{4, []stream.Option{stream.Window(4)}, []int{0, 1, 2, 3}},
		{4, []stream.Option{stream.Window(9)}, []int{0, 1, 2, 3, 4, 5, 6, 7, 8}},
	} {
		t.Run(fmt.Sprintf("concurrency %d, %d started", tc.concurrency, len(tc.wantStarted)), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const n = 20
				in := make(chan int, n)
				for i := range n {
					in <- i
				}
				close(in)
				release := make(chan struct{})
				var mu sync.Mutex
				started := []int{}
				fn := func(_ context.Context, v int) (int, error) {
					mu.Lock()
					started = append(started, v)
					mu.Unlock()
					if v == 0 {
						<-release
					}
					return 10 * v, nil
				}
				opts := append([]stream.Option{stream.Concurrency(tc.concurrency)}, tc.opts...)
				out, err := stream.Map(t.Context(), in, nil, fn, opts...)
				require.NoError(t, err)

				synctest.Wait()
				mu.Lock()
				assert.ElementsMatch(t, tc.wantStarted, started)
				mu.Unlock()
				assert.Equal(t, n-len(tc.wantStarted), len(in), "elements taken from the input")
				assert.Equal(t, 0, len(out))

				close(release)
				got := []int{}
				for r := range out {
					require.NoError(t, r.Err)
					assert.Equal(t, len(got), r.Index)
					got = append(got, r.Value)
				}
				want := make([]int, n)
				for i := range want {
					want[i] = 10 * i
				}
				assert.Equal(t, want, got)
			})
		})
	}
}

// The output buffer is the operator's only run-ahead past the window: by default 64 results,
// with Buffer(n) n. A consumer that reads nothing lets window + buffer calls be made.
func TestMapBufferIsTheRunAheadPastTheWindow(t *testing.T) {
	for _, tc := range []struct {
		opts      []stream.Option
		wantCap   int
		wantCalls int
	}{
		{nil, stream.DefaultBuffer, 2 + 64}, // the default, 64
		{[]stream.Option{stream.Buffer(0)}, 0, 2},
		{[]stream.Option{stream.Buffer(5), stream.Window(8)}, 5, 8 + 5},
	} {
		t.Run(fmt.Sprintf("buffer %d", tc.wantCap), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				in := make(chan int, 200)
				for i := range 200 {
					in <- i
				}
				close(in)
				var mu sync.Mutex
				calls := 0
				fn := func(_ context.Context, v int) (int, error) {
					mu.Lock()
					calls++
					mu.Unlock()
					return v, nil
				}
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				out, err := stream.Map(ctx, in, nil, fn, append([]stream.Option{stream.Concurrency(2)}, tc.opts...)...)
				require.NoError(t, err)
				synctest.Wait()
				assert.Equal(t, tc.wantCap, cap(out))
				assert.Equal(t, tc.wantCap, len(out))
				mu.Lock()
				assert.Equal(t, tc.wantCalls, calls)
				mu.Unlock()
			})
		})
	}
}

// On the fake clock: 400 calls of 1 ms, every 40th taking 8 ms, 8 at a time. A window of 8
// stalls every worker behind each slow call; a window of 64 keeps them busy, and takes the
// time unordered output takes.
func TestMapWindowKeepsTheWorkersBusyPastSlowCalls(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []stream.Option
		want time.Duration
	}{
		{"window 8", nil, 120 * time.Millisecond},                                // 10 groups of 40: 8 ms behind the slow call, 4 ms for the rest
		{"window 64", []stream.Option{stream.Window(64)}, 60 * time.Millisecond}, // 470 ms of calls over 8 workers: 58.75 ms, whole ms
		{"unordered", []stream.Option{stream.Unordered()}, 60 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				in := make(chan int, 400)
				for i := range 400 {
					in <- i
				}
				close(in)
				fn := func(_ context.Context, v int) (int, error) {
					d := time.Millisecond
					if v%40 == 0 {
						d = 8 * time.Millisecond
					}
					time.Sleep(d)
					return v, nil
				}
				start := time.Now()
				out, err := stream.Map(t.Context(), in, nil, fn, append([]stream.Option{stream.Concurrency(8)}, tc.opts...)...)
				require.NoError(t, err)
				count := 0
				for range out {
					count++
				}
				assert.Equal(t, 400, count)
				assert.Equal(t, tc.want, time.Since(start))
			})
		})
	}
}
