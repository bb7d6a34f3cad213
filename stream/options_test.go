package stream_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/stream"
	"github.com/levee-go/levee/timelimiter"
)

func TestMapRefusesInvalidOptionsAndArguments(t *testing.T) {
	fn := func(_ context.Context, v int) (string, error) { return "", nil }
	for _, tc := range []struct {
		name string
		in   chan int
		fn   func(context.Context, int) (string, error)
		opts []stream.Option
		want string
	}{
		{"concurrency 0", make(chan int), fn, []stream.Option{stream.Concurrency(0)}, "stream: Concurrency must be in [1, 65536], got 0"},
		{"negative concurrency", make(chan int), fn, []stream.Option{stream.Concurrency(-3)}, "stream: Concurrency must be in [1, 65536], got -3"},
		{"concurrency above the limit", make(chan int), fn, []stream.Option{stream.Concurrency(stream.MaxConcurrency + 1)}, "stream: Concurrency must be in [1, 65536], got 65537"},
		{"window 0", make(chan int), fn, []stream.Option{stream.Window(0)}, "stream: Window must be in [1, 65536], got 0"},
		{"window above the limit", make(chan int), fn, []stream.Option{stream.Window(stream.MaxWindow + 1)}, "stream: Window must be in [1, 65536], got 65537"},
		{"window below the concurrency", make(chan int), fn, []stream.Option{stream.Window(4), stream.Concurrency(8)},
			"stream: Window must be in [8, 65536] (at least Concurrency), got 4"},
		{"window below the concurrency, unordered", make(chan int), fn, []stream.Option{stream.Unordered(), stream.Concurrency(8), stream.Window(4)},
			"stream: Window must be in [8, 65536] (at least Concurrency), got 4"},
		{"negative buffer", make(chan int), fn, []stream.Option{stream.Buffer(-1)}, "stream: Buffer must be in [0, 1048576], got -1"},
		{"buffer above the limit", make(chan int), fn, []stream.Option{stream.Buffer(1 << 40)}, "stream: Buffer must be in [0, 1048576], got 1099511627776"},
		{"nil fallback", make(chan int), fn, []stream.Option{stream.WithFallback[int, string](nil)}, "stream: WithFallback needs a function, got nil"},
		{"fallback of another element type", make(chan int), fn,
			[]stream.Option{stream.WithFallback(func(context.Context, string, error) (string, error) { return "", nil })},
			"stream: Map needs a WithFallback function of type func(context.Context, int, error) (string, error), got func(context.Context, string, error) (string, error)"},
		{"fallback of another result type", make(chan int), fn,
			[]stream.Option{stream.WithFallback(func(context.Context, int, error) (int, error) { return 0, nil })},
			"stream: Map needs a WithFallback function of type func(context.Context, int, error) (string, error), got func(context.Context, int, error) (int, error)"},
		{"zero option", make(chan int), fn, []stream.Option{stream.Concurrency(2), {}}, "stream: option 1 of Map is the zero Option"},
		{"subscription option", make(chan int), fn, []stream.Option{stream.TimeLimit(stream.BoundStream)}, "stream: option TimeLimit does not apply to Map"},
		{"fallback source", make(chan int), fn,
			[]stream.Option{stream.WithFallbackSource(func(context.Context, error, func(string) error) error { return nil })},
			"stream: option WithFallbackSource does not apply to Map"},
		{"nil input", nil, fn, nil, stream.ErrNilInput.Error()},
		{"nil function", make(chan int), nil, nil, levee.ErrNilCall.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := stream.Map(context.Background(), tc.in, nil, tc.fn, tc.opts...)
			assert.EqualError(t, err, tc.want)
			assert.Nil(t, out)
		})
	}
	_, err := stream.Map[int, int](context.Background(), make(chan int), nil, nil)
	assert.ErrorIs(t, err, levee.ErrNilCall)
	_, err = stream.Map(context.Background(), nil, nil, fn)
	assert.ErrorIs(t, err, stream.ErrNilInput)
}

func TestFilterAndFlatMapRefuseInvalidOptions(t *testing.T) {
	ctx := context.Background()
	_, err := stream.Filter(ctx, make(chan int), nil, func(context.Context, int) (bool, error) { return true, nil },
		stream.WithFallback(func(context.Context, int, error) (int, error) { return 0, nil }))
	assert.EqualError(t, err, "stream: Filter needs a WithFallback function of type func(context.Context, int, error) (bool, error), got func(context.Context, int, error) (int, error)")
	_, err = stream.Filter[int](ctx, nil, nil, func(context.Context, int) (bool, error) { return true, nil })
	assert.ErrorIs(t, err, stream.ErrNilInput)
	_, err = stream.Filter[int](ctx, make(chan int), nil, nil)
	assert.ErrorIs(t, err, levee.ErrNilCall)

	_, err = stream.FlatMap(ctx, make(chan int), nil, func(context.Context, int) ([]int, error) { return nil, nil },
		stream.WithFallback(func(context.Context, int, error) (int, error) { return 0, nil }))
	assert.EqualError(t, err, "stream: FlatMap needs a WithFallback function of type func(context.Context, int, error) ([]int, error), got func(context.Context, int, error) (int, error)")
	_, err = stream.FlatMap[int, int](ctx, nil, nil, func(context.Context, int) ([]int, error) { return nil, nil })
	assert.ErrorIs(t, err, stream.ErrNilInput)
	_, err = stream.FlatMap[int, int](ctx, make(chan int), nil, nil)
	assert.ErrorIs(t, err, levee.ErrNilCall)
	_, err = stream.FlatMap(ctx, make(chan int), nil, func(context.Context, int) ([]int, error) { return nil, nil }, stream.Concurrency(0))
	assert.EqualError(t, err, "stream: Concurrency must be in [1, 65536], got 0")
}

func TestSubscribeRefusesInvalidOptions(t *testing.T) {
	src := stream.Source[int](func(context.Context, func(int) error) error { return nil })
	tl := newTimeLimiter(t, timelimiter.Config{})
	withTL := levee.Patterns{TimeLimiter: tl}
	for _, tc := range []struct {
		name string
		ps   levee.Patterns
		src  stream.Source[int]
		opts []stream.Option
		want string
	}{
		{"TimeLimit 0", withTL, src, []stream.Option{stream.TimeLimit(0)},
			"stream: TimeLimit must be a combination of BoundFirstElement, BoundGap and BoundStream, got 0"},
		{"TimeLimit unknown bound", withTL, src, []stream.Option{stream.TimeLimit(stream.BoundStream | 8)},
			"stream: TimeLimit must be a combination of BoundFirstElement, BoundGap and BoundStream, got 12"},
		{"TimeLimit without TimeLimiter", levee.Patterns{}, src, []stream.Option{stream.TimeLimit(stream.BoundStream)},
			"stream: TimeLimit needs a Patterns.TimeLimiter"},
		{"nil fallback source", levee.Patterns{}, src, []stream.Option{stream.WithFallbackSource[int](nil)},
			"stream: WithFallbackSource needs a function, got nil"},
		{"fallback source of another type", levee.Patterns{}, src,
			[]stream.Option{stream.WithFallbackSource(func(context.Context, error, func(string) error) error { return nil })},
			"stream: Subscribe needs a WithFallbackSource function of type func(context.Context, error, func(int) error) error, got func(context.Context, error, func(string) error) error"},
		{"negative buffer", levee.Patterns{}, src, []stream.Option{stream.Buffer(-2)}, "stream: Buffer must be in [0, 1048576], got -2"},
		{"Concurrency", levee.Patterns{}, src, []stream.Option{stream.Concurrency(2)}, "stream: option Concurrency does not apply to Subscribe"},
		{"Unordered", levee.Patterns{}, src, []stream.Option{stream.Unordered()}, "stream: option Unordered does not apply to Subscribe"},
		{"StopOnError", levee.Patterns{}, src, []stream.Option{stream.StopOnError()}, "stream: option StopOnError does not apply to Subscribe"},
		{"element fallback", levee.Patterns{}, src,
			[]stream.Option{stream.WithFallback(func(context.Context, int, error) (int, error) { return 0, nil })},
			"stream: option WithFallback does not apply to Subscribe"},
		{"zero option", levee.Patterns{}, src, []stream.Option{{}}, "stream: option 0 of Subscribe is the zero Option"},
		{"nil source", levee.Patterns{}, nil, nil, levee.ErrNilCall.Error()},
		{"nil channel opener", levee.Patterns{}, stream.FromChan[int](nil), nil, levee.ErrNilCall.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := stream.Subscribe(context.Background(), tc.ps, tc.src, tc.opts...)
			assert.EqualError(t, err, tc.want)
			assert.Nil(t, out)
		})
	}
}

// Every valid option is accepted where it applies.
func TestOptionsAccepted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, err := stream.Map(ctx, feed(ctx, 1), nil, func(_ context.Context, v int) (int, error) { return v, nil },
		stream.Concurrency(2), stream.Unordered(), stream.StopOnError(), stream.Buffer(4),
		stream.WithFallback(func(context.Context, int, error) (int, error) { return 0, nil }))
	require.NoError(t, err)
	assert.Len(t, drain(out), 1)
	tl := newTimeLimiter(t, timelimiter.Config{})
	items, err := stream.Subscribe(ctx, levee.Patterns{TimeLimiter: tl},
		stream.Source[int](func(_ context.Context, emit func(int) error) error { return emit(1) }),
		stream.Buffer(1), stream.TimeLimit(stream.BoundStream|stream.BoundEachElement),
		stream.WithFallbackSource(func(context.Context, error, func(int) error) error { return nil }))
	require.NoError(t, err)
	assert.Len(t, drain(items), 1)
}
