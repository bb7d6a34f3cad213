package async_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/timelimiter"
)

// A future completes at its TimeLimiter's deadline, while a call that ignores its context
// goes on holding the bulkhead permit taken inside the limiter: the exception Future states.
// timelimiter.TrackCalls waits for such calls, bounded by a context.
func TestFutureOfAnAbandonedCallAndTrackCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bh := newBulkhead(t, 2)
		p := levee.DefaultPipeline[int](levee.Patterns{TimeLimiter: newTimeLimiter(t, time.Second), Bulkhead: bh}, nil)
		ctx, calls := timelimiter.TrackCalls(context.Background())
		stubborn := func(context.Context) (int, error) {
			time.Sleep(3 * time.Second)
			return 1, nil
		}
		start := time.Now()
		rs, err := async.All(ctx, p, []levee.Call[int]{stubborn, stubborn})
		require.Error(t, err)
		assert.Equal(t, time.Second, time.Since(start), "the fan-out returns at the deadline")
		for _, r := range rs {
			assert.ErrorIs(t, r.Err, timelimiter.ErrTimeout)
		}
		v, err := async.Go(ctx, p, stubborn).Get(context.Background())
		assert.Equal(t, 0, v)
		assert.ErrorIs(t, err, bulkhead.ErrBulkheadFull, "both permits are still held by the abandoned calls")
		assert.Equal(t, 0, bh.Metrics().AvailableConcurrentCalls)
		assert.Equal(t, 2, calls.Running())

		bounded, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		assert.ErrorIs(t, calls.Wait(bounded), context.DeadlineExceeded)
		assert.NoError(t, calls.Wait(context.Background()))
		assert.Equal(t, 3*time.Second, time.Since(start))
		assert.Equal(t, 2, bh.Metrics().AvailableConcurrentCalls, "every permit is back")
	})
}
