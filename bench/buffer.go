package bench

import (
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
	cases := []StreamCase{{Impl: "levee-default", Run: leveeMap(nil, BufferInput)}}
	for _, b := range buffers {
		cases = append(cases, StreamCase{Impl: "levee-buffer-" + strconv.Itoa(b), Run: leveeMap(nil, BufferInput, stream.Buffer(b))})
	}
	return append(cases, StreamCase{Impl: "chan-buffer-" + strconv.Itoa(BufferInput), Run: chanStream(BufferInput)})
}
