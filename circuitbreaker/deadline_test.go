package circuitbreaker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/circuitbreaker"
)

// pastDeadline reports a deadline that has passed while its Err is still nil: the instant
// between the deadline and the context's timer firing.
type pastDeadline struct{ context.Context }

func (pastDeadline) Deadline() (time.Time, bool) { return time.Now().Add(-time.Millisecond), true }

// The caller's own deadline is nobody's failure at every instant: an error matching
// context.DeadlineExceeded once the deadline has passed is not recorded, even before ctx.Err()
// is set. The same error before the deadline is the dependency's failure.
func TestExecuteCallerDeadlineBeforeErrIsSet(t *testing.T) {
	cb, err := circuitbreaker.New("test", circuitbreaker.Config{SlidingWindowSize: 2, MinimumNumberOfCalls: 1})
	require.NoError(t, err)
	deadlineErr := fmt.Errorf("rpc error: code = DeadlineExceeded: %w", context.DeadlineExceeded)
	call := func(context.Context) (int, error) { return 0, deadlineErr }

	_, err = circuitbreaker.Execute(pastDeadline{context.Background()}, cb, call)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, 0, cb.Metrics().NumberOfFailedCalls)
	assert.Equal(t, 0, cb.Metrics().NumberOfBufferedCalls)
	assert.Equal(t, circuitbreaker.Closed, cb.State())

	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	_, err = circuitbreaker.Execute(ctx, cb, call)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, 1, cb.Metrics().NumberOfFailedCalls, "a deadline not the caller's is a failure")
}
