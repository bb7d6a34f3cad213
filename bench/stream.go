package bench

import (
	"context"
	"fmt"
	"sync"

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

// GoalConcurrency is the pool size of the concurrent goal cases: the workers of stream.Map's
// Concurrency, of the hand-written pool and shards, and of rxgo's WithPool.
const GoalConcurrency = 4

// GoalKeys is the number of distinct keys the by-key goal cases spread the elements over
// (element v has key v % GoalKeys): more keys than workers, as a consumer of many partitions
// or entities has.
const GoalKeys = 64

// goalKey is the key of element v in the by-key cases.
func goalKey(v int) int { return v % GoalKeys }

// GoalCases returns, for each of the stream package's performance goals, levee's stream.Map
// with no pattern and with p (the default pipeline) beside the hand-written stage doing the
// same trivial work, every case reading an input of BufferInput and writing an output of
// DefaultBuffer (64, levee's default):
//
//   - in order, one call at a time: levee, levee-pipeline and chan-buffer-64, the plain
//     channel stage;
//   - Concurrency(GoalConcurrency) with Unordered: levee-unordered, levee-pipeline-unordered
//     and pool, GoalConcurrency goroutines reading one input and writing one output;
//   - OrderByKey with Concurrency(GoalConcurrency): levee-bykey, levee-pipeline-bykey and
//     shards, a goroutine that hashes each element's key to one of GoalConcurrency shard
//     channels, each read by one goroutine (so one key's elements are called one at a time,
//     in order), all writing one output.
func GoalCases(p *levee.Pipeline[int]) []StreamCase {
	const out = 64 // stream.DefaultBuffer
	unordered := []stream.Option{stream.Concurrency(GoalConcurrency), stream.Unordered()}
	byKey := []stream.Option{stream.Concurrency(GoalConcurrency), stream.OrderByKey(goalKey)}
	return []StreamCase{
		{Impl: "levee", Run: leveeMap(nil, BufferInput)},
		{Impl: "levee-pipeline", Run: leveeMap(p, BufferInput)},
		{Impl: "chan-buffer-64", Run: chanStream(BufferInput)},
		{Impl: "levee-unordered", Run: leveeMap(nil, BufferInput, unordered...)},
		{Impl: "levee-pipeline-unordered", Run: leveeMap(p, BufferInput, unordered...)},
		{Impl: "pool", Run: poolStream(BufferInput, out, GoalConcurrency)},
		{Impl: "levee-bykey", Run: leveeMap(nil, BufferInput, byKey...)},
		{Impl: "levee-pipeline-bykey", Run: leveeMap(p, BufferInput, byKey...)},
		{Impl: "shards", Run: shardStream(BufferInput, out, GoalConcurrency)},
	}
}

// drainChan sums what a hand-written stage emits, as the consumer of every case does.
func drainChan(out <-chan chanResult) (sum, count int, err error) {
	for r := range out {
		if r.err != nil {
			return sum, count, r.err
		}
		sum += r.value
		count++
	}
	return sum, count, nil
}

// poolStream is the hand-written unordered stage: n goroutines reading one input of capacity
// input, calling double and sending each result on one output of capacity output, in
// completion order, selecting on the context only to stop.
func poolStream(input, output, n int) func(context.Context, int) (int, int, error) {
	return func(ctx context.Context, count int) (int, int, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		in := produce(ctx, count, input)
		out := make(chan chanResult, output)
		var wg sync.WaitGroup
		wg.Add(n)
		for range n {
			go func() {
				defer wg.Done()
				for v := range in {
					r, err := double(ctx, v)
					select {
					case out <- chanResult{in: v, value: r, err: err}:
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
		return drainChan(out)
	}
}

// shardStream is the hand-written by-key stage: a goroutine reads the input of capacity input
// and sends each element to shard goalKey(v) % n, a channel of capacity input / n read by one
// goroutine, which calls double and sends each result on one output of capacity output; one
// key's elements are called one at a time and sent in input order, different shards' in
// completion order.
func shardStream(input, output, n int) func(context.Context, int) (int, int, error) {
	return func(ctx context.Context, count int) (int, int, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		in := produce(ctx, count, input)
		out := make(chan chanResult, output)
		shards := make([]chan int, n)
		var wg sync.WaitGroup
		wg.Add(n)
		for i := range shards {
			shards[i] = make(chan int, max(input/n, 1))
			go func(shard <-chan int) {
				defer wg.Done()
				for v := range shard {
					r, err := double(ctx, v)
					select {
					case out <- chanResult{in: v, value: r, err: err}:
					case <-ctx.Done():
						return
					}
				}
			}(shards[i])
		}
		go func() {
			defer func() {
				for _, s := range shards {
					close(s)
				}
			}()
			for v := range in {
				select {
				case shards[goalKey(v)%n] <- v:
				case <-ctx.Done():
					return
				}
			}
		}()
		go func() {
			wg.Wait()
			close(out)
		}()
		return drainChan(out)
	}
}
