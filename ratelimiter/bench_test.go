package ratelimiter_test

import (
	"context"
	"testing"
	"time"

	"github.com/levee-go/levee/ratelimiter"
)

// A limit no benchmark run exhausts, so every operation takes a free permission.
func benchLimiter(b *testing.B) *ratelimiter.RateLimiter {
	rl, err := ratelimiter.New("bench", ratelimiter.Config{LimitForPeriod: 1 << 30,
		LimitRefreshPeriod: time.Hour, TimeoutDuration: ratelimiter.NoWait})
	if err != nil {
		b.Fatal(err)
	}
	return rl
}

func BenchmarkAcquirePermission(b *testing.B) {
	rl, ctx := benchLimiter(b), context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := rl.AcquirePermission(ctx, 1); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAcquirePermissionParallel(b *testing.B) {
	rl, ctx := benchLimiter(b), context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := rl.AcquirePermission(ctx, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkExecute(b *testing.B) {
	rl, ctx := benchLimiter(b), context.Background()
	call := func(context.Context) (int, error) { return 1, nil }
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ratelimiter.Execute(ctx, rl, call); err != nil {
			b.Fatal(err)
		}
	}
}
