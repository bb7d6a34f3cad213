package leveeredis_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/levee-go/levee/leveeredis"
	"github.com/levee-go/levee/ratelimiter"
)

// BenchmarkCheck measures one permission check against a real redis-server over loopback: the
// shared limiter (both algorithms) beside a plain fixed-window INCR+EXPIRE limiter, the floor
// of any Redis-backed limiter (one pipelined round trip, no script). ns/op is the latency per
// check with one goroutine, the inverse of the throughput with many; checks/s is reported too.
func BenchmarkCheck(b *testing.B) {
	s := startRedis(b)
	c := redis.NewClient(&redis.Options{Addr: s.addr(), MaxRetries: -1, ContextTimeoutEnabled: true, PoolSize: 16})
	defer func() { _ = c.Close() }()
	ctx := context.Background()
	cfg := leveeredis.Config{LimitForPeriod: 1 << 30, LimitRefreshPeriod: time.Hour,
		TimeoutDuration: ratelimiter.NoWait, FailureMode: leveeredis.FailClosed,
		StoreTimeout: time.Second} // measure Redis, not the timeout
	cycles, err := leveeredis.NewRateLimiter(c, "bench-cycles", cfg)
	if err != nil {
		b.Fatal(err)
	}
	cfg.Algorithm = leveeredis.GCRA
	gcra, err := leveeredis.NewRateLimiter(c, "bench-gcra", cfg)
	if err != nil {
		b.Fatal(err)
	}
	incr := func() error {
		window := strconv.FormatInt(time.Now().Unix(), 10)
		pipe := c.Pipeline()
		n := pipe.Incr(ctx, "bench:incr:"+window)
		pipe.Expire(ctx, "bench:incr:"+window, 2*time.Second)
		if _, err := pipe.Exec(ctx); err != nil {
			return err
		}
		if n.Val() > 1<<30 {
			return ratelimiter.ErrRequestNotPermitted
		}
		return nil
	}
	for _, bc := range []struct {
		name  string
		check func() error
	}{
		{"incr-expire", incr},
		{"cycles", func() error { return cycles.AcquirePermission(ctx, 1) }},
		{"gcra", func() error { return gcra.AcquirePermission(ctx, 1) }},
	} {
		for _, par := range []int{1, 16} {
			b.Run(bc.name+"/goroutines="+strconv.Itoa(par), func(b *testing.B) {
				b.ReportAllocs()
				var failed atomic.Int64
				start := time.Now()
				if par == 1 {
					for b.Loop() {
						if bc.check() != nil {
							failed.Add(1)
						}
					}
				} else {
					b.SetParallelism(par / max(1, testingProcs()))
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if bc.check() != nil {
								failed.Add(1)
							}
						}
					})
				}
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "checks/s")
				b.ReportMetric(float64(failed.Load()), "failed")
			})
		}
	}
}
