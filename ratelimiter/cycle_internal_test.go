package ratelimiter

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"
)

// cycle is t / period for every t ≥ 0 and every period, at the edges of cycles too.
func TestCycleIsTheQuotient(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		period := rapid.OneOf(rapid.Int64Range(1, 1<<20), rapid.Int64Range(1, math.MaxInt64)).Draw(rt, "period")
		rl, err := New("x", Config{LimitRefreshPeriod: time.Duration(period), TimeoutDuration: NoWait})
		if err != nil {
			rt.Skip(err)
		}
		k := rapid.Int64Range(0, math.MaxInt64/period).Draw(rt, "k")
		for _, t := range []int64{k * period, k*period - 1, k*period + 1, rapid.Int64Range(0, math.MaxInt64).Draw(rt, "t")} {
			if t >= 0 {
				if got := rl.cycle(t); got != t/period {
					rt.Fatalf("cycle(%d) with period %d = %d, want %d", t, period, got, t/period)
				}
			}
		}
	})
}

func TestCycleAtTheLimits(t *testing.T) {
	for _, period := range []int64{1, 2, 3, 7, 500, 1 << 32, math.MaxInt64 - 1, math.MaxInt64} {
		rl, err := New("x", Config{LimitRefreshPeriod: time.Duration(period), TimeoutDuration: NoWait})
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []int64{0, 1, period - 1, period, math.MaxInt64 - 1, math.MaxInt64} {
			if tt >= 0 {
				assert.Equal(t, tt/period, rl.cycle(tt), "cycle(%d) with period %d", tt, period)
			}
		}
	}
}
