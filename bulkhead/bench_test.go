package bulkhead_test

import (
	"context"
	"testing"

	"github.com/levee-go/levee/bulkhead"
)

func BenchmarkExecute(b *testing.B) {
	bh, _ := bulkhead.New("bench", bulkhead.Config{MaxConcurrentCalls: 1 << 20})
	ctx := context.Background()
	call := func(context.Context) (int, error) { return 1, nil }
	b.ReportAllocs()
	for b.Loop() {
		_, _ = bulkhead.Execute(ctx, bh, call)
	}
}

func BenchmarkExecuteParallel(b *testing.B) {
	bh, _ := bulkhead.New("bench", bulkhead.Config{MaxConcurrentCalls: 1 << 20})
	ctx := context.Background()
	call := func(context.Context) (int, error) { return 1, nil }
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = bulkhead.Execute(ctx, bh, call)
		}
	})
}

func BenchmarkAcquireRelease(b *testing.B) {
	bh, _ := bulkhead.New("bench", bulkhead.Config{MaxConcurrentCalls: 1 << 20})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if bh.Acquire(ctx) == nil {
			bh.Release()
		}
	}
}

func BenchmarkRejection(b *testing.B) {
	bh, _ := bulkhead.New("bench", bulkhead.Config{MaxConcurrentCalls: 1})
	bh.TryAcquire()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_ = bh.Acquire(ctx)
	}
}
