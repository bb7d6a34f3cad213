package bench

import (
	"context"
	"fmt"

	"github.com/reactivex/rxgo/v2"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/stream"
)

// StreamCase is one implementation of a per-emission map stage. Run feeds the elements
// 0..n-1 through it, one at a time from a producer goroutine over an unbuffered channel, and
// returns the sum and the number of the doubled values that came out, in order, so that a
// benchmark over n elements measures the stage per element and a test checks the output.
type StreamCase struct {
	Impl string
	Run  func(ctx context.Context, n int) (sum, count int, err error)
}

// StreamBuffers are the channel capacities the stream benchmarks run with: each library's
// default (unbuffered), where every element costs goroutine switches, and 128.
var StreamBuffers = []int{0, 128}

// double is the per-element call: cheap, so that the figures are the stage's own cost.
func double(_ context.Context, v int) (int, error) { return 2 * v, nil }

// StreamCases returns levee's stream.Map with no pattern (a nil pipeline) and with p (the
// default pipeline), a plain channel stage (a goroutine reading the input, calling double and
// sending each result, selecting on the context only to stop), and rxgo's Map over FromChannel.
// Every stage makes one call at a time, in order. buffer is the capacity of every channel:
// the input, the stage's output (stream.Buffer, rxgo.WithBufferedChannel) and rxgo's source;
// 0 is each library's default.
func StreamCases(p *levee.Pipeline[int], buffer int) []StreamCase {
	return []StreamCase{
		{Impl: "levee", Run: leveeStream(nil, buffer)},
		{Impl: "levee-pipeline", Run: leveeStream(p, buffer)},
		{Impl: "chan", Run: chanStream(buffer)},
		{Impl: "rxgo", Run: rxgoStream(buffer)},
	}
}

// produce sends 0..n-1 on a channel of capacity buffer, stopping early when ctx ends.
func produce(ctx context.Context, n, buffer int) <-chan int {
	in := make(chan int, buffer)
	go func() {
		defer close(in)
		for i := range n {
			select {
			case in <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	return in
}

func leveeStream(p *levee.Pipeline[int], buffer int) func(context.Context, int) (int, int, error) {
	return leveeMap(p, buffer, stream.Buffer(buffer))
}

// leveeMap runs stream.Map over p with opts, reading an input of capacity input.
func leveeMap(p *levee.Pipeline[int], input int, opts ...stream.Option) func(context.Context, int) (int, int, error) {
	return func(ctx context.Context, n int) (sum, count int, err error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel() // on an early return, ends the operator and the producer
		out, err := stream.Map(ctx, produce(ctx, n, input), p, double, opts...)
		if err != nil {
			return 0, 0, err
		}
		for r := range out {
			if r.Err != nil {
				return sum, count, r.Err
			}
			sum += r.Value
			count++
		}
		return sum, count, nil
	}
}

// chanResult is what the plain stage emits: the element, the value and the error.
type chanResult struct {
	in, value int
	err       error
}

func chanStream(buffer int) func(context.Context, int) (int, int, error) {
	return func(ctx context.Context, n int) (sum, count int, err error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		in := produce(ctx, n, buffer)
		out := make(chan chanResult, buffer)
		go func() {
			defer close(out)
			for v := range in {
				r, err := double(ctx, v)
				select {
				case out <- chanResult{in: v, value: r, err: err}:
				case <-ctx.Done():
					return
				}
			}
		}()
		for r := range out {
			if r.err != nil {
				return sum, count, r.err
			}
			sum += r.value
			count++
		}
		return sum, count, nil
	}
}

// rxgoDouble is double in rxgo's shape.
func rxgoDouble(_ context.Context, v any) (any, error) {
	i, ok := v.(int)
	if !ok {
		return nil, fmt.Errorf("bench: item %T, want int", v)
	}
	return 2 * i, nil
}

// rxgoItems sends 0..n-1 as rxgo items on a channel of capacity buffer.
func rxgoItems(ctx context.Context, n, buffer int) chan rxgo.Item {
	items := make(chan rxgo.Item, buffer)
	go func() {
		defer close(items)
		for i := range n {
			select {
			case items <- rxgo.Of(i):
			case <-ctx.Done():
				return
			}
		}
	}()
	return items
}

// collect drains an rxgo output, as the consumer of each rxgo case does.
func collect(ch <-chan rxgo.Item) (sum, count int, err error) {
	for it := range ch {
		if it.E != nil {
			return sum, count, it.E
		}
		v, ok := it.V.(int)
		if !ok {
			return sum, count, fmt.Errorf("bench: item %T, want int", it.V)
		}
		sum += v
		count++
	}
	return sum, count, nil
}

func rxgoStream(buffer int) func(context.Context, int) (int, int, error) {
	return func(ctx context.Context, n int) (sum, count int, err error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel() // rxgo stops only on a cancelled context
		opts := rxgoOptions(ctx, buffer)
		obs := rxgo.FromChannel(rxgoItems(ctx, n, buffer), opts...).Map(rxgoDouble, opts...)
		return collect(obs.Observe(opts...))
	}
}
