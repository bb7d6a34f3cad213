package stream_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/stream"
	"github.com/levee-go/levee/timelimiter"
)

// stubborn is a call that ignores its context and takes d; running counts the calls in it.
func stubborn(running *atomic.Int32, d time.Duration) func(context.Context, int) (int, error) {
	return func(_ context.Context, v int) (int, error) {
		running.Add(1)
		defer running.Add(-1)
		time.Sleep(d)
		return v, nil
	}
}

// With a TimeLimiter in the pipeline the output was closed while the calls the limiter had
// given up on were still running, though Map promises that every call has returned by then.
// The stream now closes once they have, and their bulkhead permits are back.
func TestMapClosesOnlyAfterTheCallsATimeLimiterAbandoned(t *testing.T) {
	for _, tc := range []struct {
		name        string
		cancelAt    time.Duration // 0: the consumer reads to the end
		concurrency int
		results     []string
		closedAt    time.Duration
	}{
		{"the consumer cancels", 500 * time.Millisecond, 4, nil, 3 * time.Second},
		// Elements 0-3 time out at 1s; their calls, still running, hold the bulkhead's 4
		// permits (inside the limiter) until 3s, so 4 and 5 are refused at 1s.
		{"every call times out", 0, 4, []string{"0 timeout", "1 timeout", "2 timeout", "3 timeout", "4 full", "5 full"},
			3 * time.Second},
		// Element 0 times out at 1s, 1 starts then and times out at 2s; its call returns at 4s.
		{"serial", 0, 1, []string{"0 timeout", "1 timeout"}, 4 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tl := newTimeLimiter(t, timelimiterConfig(time.Second))
				bh := newBulkhead(t, 4)
				p := levee.Compose[int]().WithBulkhead(bh).WithTimeLimiter(tl)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				n := 6
				if tc.concurrency == 1 {
					n = 2
				}
				var running atomic.Int32
				out, err := stream.Map(ctx, feed(ctx, count(n)...), p, stubborn(&running, 3*time.Second),
					stream.Concurrency(tc.concurrency))
				require.NoError(t, err)
				if tc.cancelAt > 0 {
					time.AfterFunc(tc.cancelAt, cancel)
				}
				start := time.Now()
				var got []string
				for r := range out {
					s := "ok"
					switch {
					case errors.Is(r.Err, timelimiter.ErrTimeout):
						s = "timeout"
					case errors.Is(r.Err, bulkhead.ErrBulkheadFull):
						s = "full"
					case r.Err != nil:
						s = r.Err.Error()
					}
					got = append(got, itoa(r.Index)+" "+s)
				}
				assert.Equal(t, tc.closedAt, time.Since(start), "closed when the last call returned")
				assert.Equal(t, int32(0), running.Load(), "no call is running once the output is closed")
				assert.Equal(t, 4, available(bh), "every bulkhead permit is back")
				assert.Equal(t, 0, tl.Metrics().NumberOfAbandonedCalls)
				assert.Equal(t, tc.results, got)
			})
		})
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + itoa(i%10)
}
