package bench

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// runCases times every case serially and under b.RunParallel, as sub-benchmarks named
// mode=serial|parallel/impl=NAME, so that benchstat -col /impl puts the implementations side
// by side. wantErr says whether every operation must fail (a refusal, a recorded failure);
// an operation that does otherwise fails the benchmark, so a figure always measures the
// intended path.
func runCases(b *testing.B, cases []Case, wantErr bool) {
	b.Helper()
	defer CloseAll(cases)
	for _, mode := range []string{"serial", "parallel"} {
		b.Run("mode="+mode, func(b *testing.B) {
			for _, c := range cases {
				b.Run("impl="+c.Impl, func(b *testing.B) {
					b.ReportAllocs()
					if mode == "serial" {
						serial(b, c, wantErr)
					} else {
						parallel(b, c, wantErr, 1)
					}
				})
			}
		})
	}
}

func serial(b *testing.B, c Case, wantErr bool) {
	ctx := context.Background()
	for b.Loop() {
		if err := c.Do(ctx); (err != nil) != wantErr {
			b.Fatalf("%s: error %v, want an error: %t", c.Impl, err, wantErr)
		}
	}
}

func parallel(b *testing.B, c Case, wantErr bool, parallelism int) {
	ctx := context.Background()
	b.SetParallelism(parallelism)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := c.Do(ctx); (err != nil) != wantErr {
				b.Errorf("%s: error %v, want an error: %t", c.Impl, err, wantErr)
				return
			}
		}
	})
}

func must(b *testing.B, cases []Case, err error) []Case {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
	return cases
}

// BenchmarkBreaker: a call through each breaker's Execute, with a count window of 100 calls
// and a time window of 60 s: succeeding, failing (recorded, breaker kept closed) and refused
// by an open breaker.
func BenchmarkBreaker(b *testing.B) {
	for _, w := range []Window{CountWindow, TimeWindow} {
		for _, load := range []BreakerLoad{BreakerSuccess, BreakerFailure, BreakerRejected} {
			if w == TimeWindow && load == BreakerRejected {
				continue // an open breaker does not look at its window
			}
			b.Run("window="+w.String()+"/load="+load.String(), func(b *testing.B) {
				cases, err := BreakerCases(w, load)
				runCases(b, must(b, cases, err), load != BreakerSuccess)
			})
		}
	}
}

// BenchmarkLimiter: one permission, available at once or refused at once.
func BenchmarkLimiter(b *testing.B) {
	for _, load := range []LimiterLoad{LimiterAvailable, LimiterExhausted} {
		b.Run("load="+load.String(), func(b *testing.B) {
			cases, err := LimiterCases(load)
			runCases(b, must(b, cases, err), load == LimiterExhausted)
		})
	}
}

// BenchmarkBulkhead: acquire and release of one permit, always free.
func BenchmarkBulkhead(b *testing.B) {
	cases, err := BulkheadCases()
	runCases(b, must(b, cases, err), false)
}

// BenchmarkRetry: a call that succeeds at its first attempt.
func BenchmarkRetry(b *testing.B) {
	cases, err := RetryCases(Succeed)
	runCases(b, must(b, cases, err), false)
}

// BenchmarkTimeLimiter: a call that returns at once, under a 1 s deadline of its own.
func BenchmarkTimeLimiter(b *testing.B) {
	cases, err := TimeLimiterCases(Succeed, time.Second)
	runCases(b, must(b, cases, err), false)
}

// BenchmarkPipeline: a successful call through Resilience4j's default pipeline (Retry,
// CircuitBreaker, RateLimiter, Bulkhead, Fallback) in levee and in failsafe-go, and directly.
func BenchmarkPipeline(b *testing.B) {
	p, err := NewPipeline()
	if err != nil {
		b.Fatal(err)
	}
	runCases(b, PipelineCases(p, Succeed), false)
}

// BenchmarkScaling: the successful breaker call and the available limiter acquire with 1, 2,
// 8 and 64 goroutines on 2 cores. Each sub-benchmark sets what -cpu would (GOMAXPROCS, procs=N
// in its name: the goroutine count up to 8) and SetParallelism for the rest, as
// goroutines=64/procs=8 runs 8 goroutines per P. It sets GOMAXPROCS itself because testing
// applies -cpu to every sub-benchmark, which would run each count at every setting; the -2
// suffix of the names is the GOMAXPROCS the binary started with.
func BenchmarkScaling(b *testing.B) {
	groups := []struct {
		name  string
		build func() ([]Case, error)
	}{
		{"breaker", func() ([]Case, error) { return BreakerCases(CountWindow, BreakerSuccess) }},
		{"limiter", func() ([]Case, error) { return LimiterCases(LimiterAvailable) }},
	}
	for _, grp := range groups {
		for _, g := range []int{1, 2, 8, 64} {
			procs := min(g, 8)
			name := "pattern=" + grp.name + "/goroutines=" + strconv.Itoa(g) + "/procs=" + strconv.Itoa(procs)
			b.Run(name, func(b *testing.B) {
				cases, err := grp.build()
				cases = must(b, cases, err)
				defer CloseAll(cases)
				for _, c := range cases {
					b.Run("impl="+c.Impl, func(b *testing.B) {
						defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
						b.ReportAllocs()
						b.ResetTimer()
						parallel(b, c, false, g/procs)
						b.StopTimer()
					})
				}
			})
		}
	}
}

// BenchmarkTimeoutLatency: a call that ignores its context and returns 50 ms after a 10 ms
// deadline. late-ns/op is how long after the deadline the caller got its answer, on average;
// max-late-ns the worst of the run. levee answers at the deadline; failsafe-go's timeout and a
// bare context.WithTimeout only when the call returns.
func BenchmarkTimeoutLatency(b *testing.B) {
	const timeout, hang = 10 * time.Millisecond, 60 * time.Millisecond
	cases, err := TimeLimiterCases(Hang(hang), timeout)
	cases = must(b, cases, err)
	ctx := context.Background()
	for _, c := range cases {
		b.Run("impl="+c.Impl, func(b *testing.B) {
			var sum, worst time.Duration
			for b.Loop() {
				late, err := Late(ctx, c, timeout)
				if err == nil {
					b.Fatalf("%s: no error from a call that timed out", c.Impl)
				}
				sum += late
				worst = max(worst, late)
			}
			b.ReportMetric(float64(sum.Nanoseconds())/float64(b.N), "late-ns/op")
			b.ReportMetric(float64(worst.Nanoseconds()), "max-late-ns")
		})
	}
	// levee's abandoned calls end hang after their deadline; goleak's retries at the end of
	// the run wait for them.
}
