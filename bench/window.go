package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/levee-go/levee/stream"
)

// The reorder-window workload: WindowElements calls of WindowCall each, WindowConcurrency at a
// time.
const (
	WindowElements    = 10_000
	WindowConcurrency = 8
	WindowCall        = time.Millisecond
)

// WindowCase is one way of running slow calls WindowConcurrency at a time. Run feeds the
// elements 0..n-1 through it, each call sleeping d and returning its element, and returns
// how many results came out; it fails when an ordered case delivers out of order.
type WindowCase struct {
	Impl string
	Run  func(ctx context.Context, n int, d time.Duration) (count int, err error)
}

// WindowCases returns stream.Map with Concurrency(WindowConcurrency) in order with the default
// window (the concurrency, 8) and with Window(64), unordered, and a plain worker pool
// (WindowConcurrency goroutines reading one input channel and writing one output channel, in
// completion order).
func WindowCases() []WindowCase {
	return []WindowCase{
		{Impl: "ordered-window-8", Run: leveeWindow(true, stream.Concurrency(WindowConcurrency))},
		{Impl: "ordered-window-64", Run: leveeWindow(true, stream.Concurrency(WindowConcurrency), stream.Window(64))},
		{Impl: "unordered", Run: leveeWindow(false, stream.Concurrency(WindowConcurrency), stream.Unordered())},
		{Impl: "pool", Run: poolWindow},
	}
}

// sleepy returns a call that takes d and answers its element.
func sleepy(d time.Duration) func(context.Context, int) (int, error) {
	return func(_ context.Context, v int) (int, error) {
		time.Sleep(d)
		return v, nil
	}
}

func leveeWindow(ordered bool, opts ...stream.Option) func(context.Context, int, time.Duration) (int, error) {
	return func(ctx context.Context, n int, d time.Duration) (int, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		out, err := stream.Map(ctx, produce(ctx, n, 0), nil, sleepy(d), opts...)
		if err != nil {
			return 0, err
		}
		count := 0
		for r := range out {
			if r.Err != nil {
				return count, r.Err
			}
			if ordered && r.Value != count {
				return count, fmt.Errorf("bench: result %d out of order at %d", r.Value, count)
			}
			count++
		}
		return count, ctx.Err()
	}
}

func poolWindow(ctx context.Context, n int, d time.Duration) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	in := produce(ctx, n, 0)
	out := make(chan int)
	call := sleepy(d)
	var wg sync.WaitGroup
	for range WindowConcurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for v := range in {
				r, _ := call(ctx, v)
				select {
				case out <- r:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(out)
	}()
	count := 0
	for range out {
		count++
	}
	return count, ctx.Err()
}
