package operators_test

import (
	"context"
	"testing"

	"github.com/reactivex/rxgo/v2"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/operators"
)

const benchItems = 10_000

func benchRange(b *testing.B, obs func() rxgo.Observable) {
	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		for range obs().Observe(rxgo.WithContext(ctx)) {
			n++
		}
		cancel()
		if n != benchItems {
			b.Fatalf("%d items", n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchItems), "ns/item")
}

// BenchmarkRxgoMap is the baseline: rxgo's own Map, unguarded.
func BenchmarkRxgoMap(b *testing.B) {
	benchRange(b, func() rxgo.Observable {
		return rxgo.Range(0, benchItems).Map(func(_ context.Context, v any) (any, error) { return v.(int) * 2, nil })
	})
}

// BenchmarkMap guards each item with a circuit breaker.
func BenchmarkMap(b *testing.B) {
	cb, _ := circuitbreaker.New("bench", circuitbreaker.Config{})
	m, _ := operators.Map(levee.Compose[int]().WithCircuitBreaker(cb), double)
	benchRange(b, func() rxgo.Observable { return m(rxgo.Range(0, benchItems)) })
}

// BenchmarkMapConcurrency4 is BenchmarkMap with four workers keeping the order.
func BenchmarkMapConcurrency4(b *testing.B) {
	cb, _ := circuitbreaker.New("bench", circuitbreaker.Config{})
	m, _ := operators.Map(levee.Compose[int]().WithCircuitBreaker(cb), double, operators.Concurrency(4))
	benchRange(b, func() rxgo.Observable { return m(rxgo.Range(0, benchItems)) })
}
