package bench

import (
	"context"
	"strconv"

	"github.com/levee-go/levee/stream"
)

// BufferInput is the capacity of the input channel of the output-buffer cases: a producer that
// runs ahead, as a consumer of a log or a queue does.
const BufferInput = 64

// BufferCases returns stream.Map with no pattern and its default output, then with each of
// the output capacities given (stream.Buffer), beside the plain channel stage with a buffered
// output of BufferInput; every case reads an input of capacity BufferInput.
func BufferCases(buffers ...int) []StreamCase {
	cases := []StreamCase{{Impl: "levee-default", Run: leveeMap(BufferInput)}}
	for _, b := range buffers {
		cases = append(cases, StreamCase{Impl: "levee-buffer-" + strconv.Itoa(b), Run: leveeMap(BufferInput, stream.Buffer(b))})
	}
	return append(cases, StreamCase{Impl: "chan-buffer-" + strconv.Itoa(BufferInput), Run: chanStream(BufferInput)})
}

func leveeMap(input int, opts ...stream.Option) func(context.Context, int) (int, int, error) {
	return func(ctx context.Context, n int) (sum, count int, err error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		out, err := stream.Map(ctx, produce(ctx, n, input), nil, double, opts...)
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
