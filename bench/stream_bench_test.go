package bench

import (
	"context"
	"runtime"
	"strconv"
	"testing"
)

// runStream feeds b.N elements through c, so that ns/op is the time per element; allocs/elem
// is the exact number of heap allocations per element (allocs/op rounds down), setup and
// goroutines included.
func runStream(b *testing.B, c StreamCase) {
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	sum, count, err := c.Run(context.Background(), b.N)
	b.StopTimer()
	runtime.ReadMemStats(&after)
	if err != nil {
		b.Fatalf("%s: %v", c.Impl, err)
	}
	if count != b.N || sum != b.N*(b.N-1) {
		b.Fatalf("%s: %d values summing to %d, want %d summing to %d", c.Impl, count, sum, b.N, b.N*(b.N-1))
	}
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N), "allocs/elem")
}

// BenchmarkStreamMap: one element through a per-emission map stage. Run it with
// -benchtime=1000000x: a million elements per run.
func BenchmarkStreamMap(b *testing.B) {
	p, err := NewPipeline()
	if err != nil {
		b.Fatal(err)
	}
	for _, buffer := range StreamBuffers {
		for _, c := range StreamCases(p.Levee, buffer) {
			b.Run("buffer="+strconv.Itoa(buffer)+"/impl="+c.Impl, func(b *testing.B) { runStream(b, c) })
		}
	}
}

// BenchmarkOperatorsMap: one element through levee's rxgo adapter and through rxgo's Map.
// Run it with -benchtime=1000000x.
func BenchmarkOperatorsMap(b *testing.B) {
	for _, buffer := range StreamBuffers {
		cases, err := OperatorCases(buffer)
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range cases {
			b.Run("buffer="+strconv.Itoa(buffer)+"/impl="+c.Impl, func(b *testing.B) { runStream(b, c) })
		}
	}
}

// BenchmarkWindow: WindowElements calls of WindowCall, WindowConcurrency at a time, per op,
// in order with a reorder window of 8 and of 64, unordered, and through a plain worker pool.
// The calls sleep for real: run it with -benchtime=1x and a -count.
func BenchmarkWindow(b *testing.B) {
	for _, c := range WindowCases() {
		b.Run("impl="+c.Impl, func(b *testing.B) {
			for range b.N {
				count, err := c.Run(context.Background(), WindowElements, WindowCall)
				if err != nil {
					b.Fatalf("%s: %v", c.Impl, err)
				}
				if count != WindowElements {
					b.Fatalf("%s: %d results, want %d", c.Impl, count, WindowElements)
				}
			}
		})
	}
}

// BenchmarkStreamBuffer: one element through stream.Map with its default output and with
// output buffers of 0 to 64, beside a plain channel stage with a buffered output, all reading
// a buffered input. Run it with -benchtime=1000000x.
func BenchmarkStreamBuffer(b *testing.B) {
	for _, c := range BufferCases(0, 8, 16, 32, 64, 128) {
		b.Run("impl="+c.Impl, func(b *testing.B) { runStream(b, c) })
	}
}
