package retry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/retry"
)

// A call whose context is already done makes no attempt, bare or in a pipeline, and returns
// the caller's cancellation itself.
func TestExecuteWithCancelledContextMakesNoCall(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"cancelled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, context.Canceled},
		{"deadline passed", func() (context.Context, context.CancelFunc) {
			return context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		}, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := tc.ctx()
			defer cancel()
			r := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
			calls := 0
			call := func(context.Context) (int, error) { calls++; return 1, errors.New("boom") }

			v, err := retry.Execute(ctx, r, call)
			assert.Zero(t, v)
			assert.Equal(t, tc.want, err)
			assert.Zero(t, calls)

			p := levee.Compose[int]().WithRetry(r)
			v, err = p.Execute(ctx, call)
			assert.Zero(t, v)
			require.ErrorIs(t, err, tc.want)
			assert.Zero(t, calls, "a pipeline makes no call either")

			m := r.Metrics()
			assert.Zero(t, m.NumberOfFailedCallsWithoutRetryAttempt+m.NumberOfFailedCallsWithRetryAttempt+
				m.NumberOfSuccessfulCallsWithoutRetryAttempt+m.NumberOfSuccessfulCallsWithRetryAttempt)
		})
	}
}
