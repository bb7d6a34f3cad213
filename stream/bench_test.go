package stream_test

import (
	"context"
	"testing"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/stream"
)

// The benchmarks push b.N ints through one stage and compare Map with a plain channel
// stage of the same shape (a goroutine reading one channel and writing another) and the same
// buffers. Run with -benchmem; the per-element figures are ns/op and allocs/op.

func source(ctx context.Context, n, buffer int) <-chan int {
	ch := make(chan int, buffer)
	go func() {
		defer close(ch)
		for i := range n {
			select {
			case ch <- 1000 + i:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}

func double(_ context.Context, v int) (int, error) { return 2 * v, nil }

func benchPlain(b *testing.B, buffer int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := source(ctx, b.N, buffer)
	out := make(chan int, buffer)
	b.ResetTimer()
	go func() {
		defer close(out)
		for v := range in {
			r, _ := double(ctx, v)
			select {
			case out <- r:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range out {
	}
}

func benchMap(b *testing.B, buffer int, p *levee.Pipeline[int], opts ...stream.Option) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := source(ctx, b.N, buffer)
	b.ResetTimer()
	out, err := stream.Map(ctx, in, p, double, append(opts, stream.Buffer(buffer))...)
	if err != nil {
		b.Fatal(err)
	}
	for range out {
	}
}

func BenchmarkPlainStage(b *testing.B)         { benchPlain(b, 0) }
func BenchmarkPlainStageBuffered(b *testing.B) { benchPlain(b, 128) }
func BenchmarkMap(b *testing.B)                { benchMap(b, 0, nil) }
func BenchmarkMapBuffered(b *testing.B)        { benchMap(b, 128, nil) }
func BenchmarkMapDefaultPipeline(b *testing.B) {
	benchMap(b, 128, levee.DefaultPipeline[int](defaultPatterns(b), nil))
}
func BenchmarkMapConcurrency4(b *testing.B) { benchMap(b, 128, nil, stream.Concurrency(4)) }
func BenchmarkMapConcurrency4Unordered(b *testing.B) {
	benchMap(b, 128, nil, stream.Concurrency(4), stream.Unordered())
}

func BenchmarkSubscribe(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	items, err := stream.Subscribe(ctx, levee.Patterns{}, stream.Source[int](func(_ context.Context, emit func(int) error) error {
		for i := range b.N {
			if err := emit(i); err != nil {
				return err
			}
		}
		return nil
	}), stream.Buffer(128))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range items {
	}
}
