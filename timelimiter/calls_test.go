package timelimiter_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/timelimiter"
)

// The calls a time limiter gave up on can be waited for, bounded by a context.
func TestCallsWaitsForAbandonedCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl, err := timelimiter.New("tl", timelimiter.Config{TimeoutDuration: time.Second})
		require.NoError(t, err)
		ctx, calls := timelimiter.TrackCalls(context.Background())
		var returned atomic.Int32
		stubborn := func(context.Context) (int, error) { // ignores its context
			time.Sleep(3 * time.Second)
			returned.Add(1)
			return 1, nil
		}
		start := time.Now()
		for range 2 {
			_, err := timelimiter.Execute(ctx, tl, stubborn)
			require.ErrorIs(t, err, timelimiter.ErrTimeout)
		}
		assert.Equal(t, 2*time.Second, time.Since(start), "the caller has each timeout at its deadline")
		assert.Equal(t, 2, calls.Running())

		bounded, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		assert.ErrorIs(t, calls.Wait(bounded), context.DeadlineExceeded)
		assert.Equal(t, 2500*time.Millisecond, time.Since(start))

		assert.NoError(t, calls.Wait(context.Background()))
		assert.Equal(t, 4*time.Second, time.Since(start), "the second call returns 3s after it started at 1s")
		assert.Equal(t, int32(2), returned.Load())
		assert.Equal(t, 0, calls.Running())

		var none *timelimiter.Calls
		assert.NoError(t, none.Wait(context.Background()))
		assert.Equal(t, 0, none.Running())
	})
}
