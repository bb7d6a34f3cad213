package adaptive_test

import (
	"context"
	"testing"

	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/priority"
)

func BenchmarkExecute(b *testing.B) {
	l, err := adaptive.New("bench", adaptive.Config{InitialLimit: 1000, MaxLimit: 1000})
	if err != nil {
		b.Fatal(err)
	}
	call := func(context.Context) (int, error) { return 1, nil }
	ctx := context.Background()
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			adaptive.Execute(ctx, l, call)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				adaptive.Execute(ctx, l, call)
			}
		})
	})
}

func BenchmarkRejection(b *testing.B) {
	l, err := adaptive.New("bench", adaptive.Config{InitialLimit: 1, MaxLimit: 1})
	if err != nil {
		b.Fatal(err)
	}
	p, _ := l.Acquire(context.Background())
	defer p.OnIgnore()
	call := func(context.Context) (int, error) { return 1, nil }
	b.ReportAllocs()
	for b.Loop() {
		adaptive.Execute(context.Background(), l, call)
	}
}

func BenchmarkPrioritized(b *testing.B) {
	l, err := adaptive.New("bench", adaptive.Config{InitialLimit: 1000, MaxLimit: 1000, MaxQueued: 100})
	if err != nil {
		b.Fatal(err)
	}
	p, err := adaptive.NewPrioritizer("bench", adaptive.PrioritizerConfig{})
	if err != nil {
		b.Fatal(err)
	}
	p.Register(l)
	call := func(context.Context) (int, error) { return 1, nil }
	ctx := priority.WithPriority(context.Background(), priority.High)
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			adaptive.ExecutePrioritized(ctx, p, l, call)
		}
	})
	b.Run("limiter-only", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			adaptive.Execute(ctx, l, call)
		}
	})
}
