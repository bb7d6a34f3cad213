package circuitbreaker_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
)

// TestPanicWithARejectionIsRecordedAsAFailure: a call that panics with a levee rejection (the
// error of an inner bulkhead passed to levee.Must, say) used to be taken for a rejection, since
// the *levee.PanicError unwraps to its value: the breaker ignored it and released the permit,
// although a panic in the guarded call is documented to be recorded as a failure whatever
// RecordErrors says.
func TestPanicWithARejectionIsRecordedAsAFailure(t *testing.T) {
	cb, err := circuitbreaker.New("panic", circuitbreaker.Config{SlidingWindowSize: 2, MinimumNumberOfCalls: 2})
	require.NoError(t, err)
	inner, err := bulkhead.New("inner", bulkhead.Config{MaxConcurrentCalls: bulkhead.NoConcurrentCalls})
	require.NoError(t, err)
	call := func(ctx context.Context) (int, error) {
		return levee.Must(bulkhead.Execute(ctx, inner, func(context.Context) (int, error) { return 1, nil })), nil
	}
	for range 2 {
		_, err := circuitbreaker.Execute(context.Background(), cb, call)
		var pe *levee.PanicError
		require.True(t, errors.As(err, &pe))
		assert.ErrorIs(t, err, bulkhead.ErrBulkheadFull)
		assert.False(t, levee.IsRejection(err))
	}
	m := cb.Metrics()
	m.TotalDuration, m.AverageDuration = 0, 0 // measured on the real clock
	assert.Equal(t, circuitbreaker.Metrics{State: circuitbreaker.Open, FailureRate: 100, SlowCallRate: 0,
		NumberOfBufferedCalls: 2, NumberOfFailedCalls: 2}, m)
}
