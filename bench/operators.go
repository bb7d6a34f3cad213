package bench

import (
	"context"

	"github.com/reactivex/rxgo/v2"

	"github.com/levee-go/levee/operators"
)

// OperatorCases returns levee's operators.Map with no pattern, applied to an rxgo
// FromChannel, and rxgo's own Map on the same source: the cost of the adapter against rxgo's
// operator alone. buffer is the capacity of the source channel and of each operator's output
// (operators.Buffer, rxgo.WithBufferedChannel); 0 is each library's default.
func OperatorCases(buffer int) ([]StreamCase, error) {
	var opts []operators.Option
	if buffer > 0 {
		opts = append(opts, operators.Buffer(buffer))
	}
	op, err := operators.Map[int, int](nil, double, opts...)
	if err != nil {
		return nil, err
	}
	return []StreamCase{
		{Impl: "levee", Run: func(ctx context.Context, n int) (int, int, error) {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			src := rxgo.FromChannel(rxgoItems(ctx, n, buffer), rxgoOptions(ctx, buffer)...)
			return collect(op(src).Observe(rxgo.WithContext(ctx)))
		}},
		{Impl: "rxgo", Run: rxgoStream(buffer)},
	}, nil
}

// rxgoOptions are the options every rxgo operator of a case gets: the context to stop with,
// and the buffer.
func rxgoOptions(ctx context.Context, buffer int) []rxgo.Option {
	opts := []rxgo.Option{rxgo.WithContext(ctx)}
	if buffer > 0 {
		opts = append(opts, rxgo.WithBufferedChannel(buffer))
	}
	return opts
}

// OperatorGoalCases returns the operators module's goal cases, levee's operators.Map with no
// pattern beside rxgo's own Map with the same pool size, on the same FromChannel source of
// BufferInput, every output of 64 (operators.DefaultBuffer; rxgo.WithBufferedChannel(64)):
// one call at a time in order (levee, rxgo), and GoalConcurrency at once in completion order
// (levee-unordered with Concurrency and Unordered, rxgo-pool with rxgo.WithPool).
func OperatorGoalCases() ([]StreamCase, error) {
	serial, err := operators.Map[int, int](nil, double)
	if err != nil {
		return nil, err
	}
	pooled, err := operators.Map[int, int](nil, double, operators.Concurrency(GoalConcurrency), operators.Unordered())
	if err != nil {
		return nil, err
	}
	levee := func(op operators.Operator) func(context.Context, int) (int, int, error) {
		return func(ctx context.Context, n int) (int, int, error) {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			src := rxgo.FromChannel(rxgoItems(ctx, n, BufferInput), rxgoOptions(ctx, BufferInput)...)
			return collect(op(src).Observe(rxgo.WithContext(ctx)))
		}
	}
	rx := func(pool int) func(context.Context, int) (int, int, error) {
		return func(ctx context.Context, n int) (int, int, error) {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			opts := rxgoOptions(ctx, 64)
			if pool > 1 {
				opts = append(opts, rxgo.WithPool(pool))
			}
			src := rxgo.FromChannel(rxgoItems(ctx, n, BufferInput), rxgoOptions(ctx, BufferInput)...)
			return collect(src.Map(rxgoDouble, opts...).Observe(rxgo.WithContext(ctx)))
		}
	}
	return []StreamCase{
		{Impl: "levee", Run: levee(serial)},
		{Impl: "rxgo", Run: rx(1)},
		{Impl: "levee-unordered", Run: levee(pooled)},
		{Impl: "rxgo-pool", Run: rx(GoalConcurrency)},
	}, nil
}
