package circuitbreaker_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	cb "github.com/levee-go/levee/circuitbreaker"
)

func TestSuccessPathDoesNotAllocate(t *testing.T) {
	for _, typ := range []cb.SlidingWindowType{cb.CountBased, cb.TimeBased} {
		t.Run(typ.String(), func(t *testing.T) {
			b := mustNew(t, cb.Config{SlidingWindowType: typ, SlidingWindowSize: 10})
			ctx := context.Background()
			allocs := testing.AllocsPerRun(1000, func() {
				y := 42 // captured by a closure that must stay on the stack: Execute does not retain call
				v, err := cb.Execute(ctx, b, func(context.Context) (int, error) { return y, nil })
				if v != 42 || err != nil {
					panic("unexpected result")
				}
			})
			assert.Equal(t, 0.0, allocs, "Execute")

			allocs = testing.AllocsPerRun(1000, func() {
				p, err := b.Acquire()
				if err != nil {
					panic("refused")
				}
				p.OnSuccess()
			})
			assert.Equal(t, 0.0, allocs, "Acquire + OnSuccess")

			allocs = testing.AllocsPerRun(1000, func() {
				p, _ := b.Acquire()
				p.OnResult(nil, nil)
			})
			assert.Equal(t, 0.0, allocs, "Acquire + OnResult")

			allocs = testing.AllocsPerRun(1000, func() {
				p, _ := b.Acquire()
				p.Release()
			})
			assert.Equal(t, 0.0, allocs, "Acquire + Release")
			assert.Equal(t, cb.Closed, b.State())
		})
	}
}

func BenchmarkExecute(b *testing.B) {
	br, err := cb.New("bench", cb.Config{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	call := func(context.Context) (int, error) { return 1, nil }
	b.ReportAllocs()
	for b.Loop() {
		_, _ = cb.Execute(ctx, br, call)
	}
}

func BenchmarkExecuteParallel(b *testing.B) {
	br, err := cb.New("bench", cb.Config{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	call := func(context.Context) (int, error) { return 1, nil }
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = cb.Execute(ctx, br, call)
		}
	})
}
