package bench

import (
	"context"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// runStream feeds b.N elements through c, so that ns/op is the time per element; allocs/elem
// is the exact number of heap allocations per element (allocs/op rounds down), setup and
// goroutines included; cpu-ns/elem is the process's CPU time (user and system, every
// goroutine's) per element, steadier than ns/op on a machine shared with other work.
func runStream(b *testing.B, c StreamCase) {
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	cpu := cpuTime()
	sum, count, err := c.Run(context.Background(), b.N)
	cpu = cpuTime() - cpu
	b.StopTimer()
	runtime.ReadMemStats(&after)
	if err != nil {
		b.Fatalf("%s: %v", c.Impl, err)
	}
	if count != b.N || sum != b.N*(b.N-1) {
		b.Fatalf("%s: %d values summing to %d, want %d summing to %d", c.Impl, count, sum, b.N, b.N*(b.N-1))
	}
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N), "allocs/elem")
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/elem")
}

// cpuTime is the CPU time the process has used so far, user and system.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
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

// BenchmarkStreamGoals: one element through each of GoalCases, levee's stream.Map beside the
// hand-written stage its goal compares it with. Run it with -benchtime=1000000x and a -count;
// the cases of one sample run one after the other, so the compared ones are interleaved.
func BenchmarkStreamGoals(b *testing.B) {
	p, err := NewPipeline()
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range GoalCases(p.Levee) {
		b.Run("impl="+c.Impl, func(b *testing.B) { runStream(b, c) })
	}
}

// BenchmarkOperatorsGoals: one element through each of OperatorGoalCases, levee's
// operators.Map beside rxgo's Map with the same pool size. Run it with -benchtime=1000000x.
func BenchmarkOperatorsGoals(b *testing.B) {
	cases, err := OperatorGoalCases()
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range cases {
		b.Run("impl="+c.Impl, func(b *testing.B) { runStream(b, c) })
	}
}
