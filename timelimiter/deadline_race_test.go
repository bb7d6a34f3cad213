package timelimiter_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/timelimiter"
)

// A call that sees the deadline pass on its own (a server answering to the same deadline)
// and returns context.DeadlineExceeded before the attempt's timer fires is still this
// limiter's timeout, not an error.
func TestCallReturningDeadlineExceededAtItsDeadlineIsATimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl, err := timelimiter.New("grpc", timelimiter.Config{TimeoutDuration: time.Second})
		require.NoError(t, err)
		var types []timelimiter.EventType
		tl.Subscribe(func(e timelimiter.Event) { types = append(types, e.Type) })
		_, err = timelimiter.Execute(context.Background(), tl, func(ctx context.Context) (int, error) {
			time.Sleep(time.Second) // the deadline's instant: the timer has not fired for us yet
			return 0, context.DeadlineExceeded
		})
		assert.ErrorIs(t, err, timelimiter.ErrTimeout)
		assert.Equal(t, []timelimiter.EventType{timelimiter.EventTimeout}, types)
		m := tl.Metrics()
		assert.Equal(t, int64(1), m.NumberOfTimedOutCalls)
		assert.Equal(t, int64(0), m.NumberOfFailedCalls)
	})
}
