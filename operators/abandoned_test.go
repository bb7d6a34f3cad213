package operators_test

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/operators"
	"github.com/levee-go/levee/timelimiter"
)

// With a TimeLimiter in the pipeline the output was closed while the calls the limiter had
// given up on were still running. It now closes once they have returned, and their bulkhead
// permits are back.
func TestMapClosesOnlyAfterTheCallsATimeLimiterAbandoned(t *testing.T) {
	for _, tc := range []struct {
		name        string
		cancelAt    time.Duration // 0: the consumer reads to the end
		concurrency int
		n           int
		results     []string
		closedAt    time.Duration
	}{
		{"the consumer cancels", 500 * time.Millisecond, 4, 6, nil, 3 * time.Second},
		// Elements 0-3 time out at 1s; their calls, still running, hold the bulkhead's 4
		// permits (inside the limiter) until 3s, so 4 and 5 are refused at 1s.
		{"every call times out", 0, 4, 6, []string{"0 timeout", "1 timeout", "2 timeout", "3 timeout", "4 full", "5 full"}, 3 * time.Second},
		// Element 0 times out at 1s, 1 starts then and times out at 2s; its call returns at 4s.
		{"serial", 0, 1, 2, []string{"0 timeout", "1 timeout"}, 4 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tl := newTimeLimiter(t, time.Second)
				bh := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 4})
				p := levee.Compose[int]().WithBulkhead(bh).WithTimeLimiter(tl)
				var running atomic.Int32
				op, err := operators.MapResults(p, func(_ context.Context, v int) (int, error) {
					running.Add(1)
					defer running.Add(-1)
					time.Sleep(3 * time.Second) // ignores its context
					return v, nil
				}, operators.Concurrency(tc.concurrency))
				require.NoError(t, err)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if tc.cancelAt > 0 {
					time.AfterFunc(tc.cancelAt, cancel)
				}
				start := time.Now()
				var got []string
				for it := range op(rxgo.Just(ints(tc.n)...)()).Observe(rxgo.WithContext(ctx)) {
					r := it.V.(operators.Result[int, int])
					s := "ok"
					switch {
					case errors.Is(r.Err, timelimiter.ErrTimeout):
						s = "timeout"
					case errors.Is(r.Err, bulkhead.ErrBulkheadFull):
						s = "full"
					case r.Err != nil:
						s = r.Err.Error()
					}
					got = append(got, strconv.Itoa(r.Index)+" "+s)
				}
				assert.Equal(t, tc.closedAt, time.Since(start), "closed when the last call returned")
				assert.Equal(t, int32(0), running.Load(), "no call is running once the output is closed")
				assert.Equal(t, 4, bh.Metrics().AvailableConcurrentCalls, "every bulkhead permit is back")
				assert.Equal(t, 0, tl.Metrics().NumberOfAbandonedCalls)
				assert.Equal(t, tc.results, got)
			})
		})
	}
}
