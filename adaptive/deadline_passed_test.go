package adaptive_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/adaptive"
)

// pastDeadline is a context whose deadline has passed but whose Err is not set yet, as a
// context is for an instant after its deadline (a call's own timer may fire first).
type pastDeadline struct{ context.Context }

func (pastDeadline) Deadline() (time.Time, bool) { return time.Now().Add(-time.Millisecond), true }

// TestExecuteCallerDeadlineBeforeErrIsSetIsNoDrop: an error matching
// context.DeadlineExceeded once the caller's deadline has passed is the caller's end, not a
// drop, even before ctx.Err() is set, as Execute's doc says.
func TestExecuteCallerDeadlineBeforeErrIsSetIsNoDrop(t *testing.T) {
	for name, run := range map[string]func(ctx context.Context, call func(context.Context) (int, error)) (func() uint64, error){
		"Limiter": func(ctx context.Context, call func(context.Context) (int, error)) (func() uint64, error) {
			l := newLimiter(t, adaptive.Config{})
			_, err := adaptive.Execute(ctx, l, call)
			return func() uint64 { return l.Metrics().Dropped }, err
		},
		"PartitionedLimiter": func(ctx context.Context, call func(context.Context) (int, error)) (func() uint64, error) {
			// No Dropped count here: a drop shows as the limit it lowers.
			l := newPartitioned(t, adaptive.PartitionedConfig{})
			before := l.Metrics().Limit
			_, err := adaptive.ExecutePartitioned(ctx, l, call)
			return func() uint64 { return uint64(before - l.Metrics().Limit) }, err
		},
	} {
		t.Run(name, func(t *testing.T) {
			deadlineErr := fmt.Errorf("rpc error: code = DeadlineExceeded: %w", context.DeadlineExceeded)
			call := func(context.Context) (int, error) { return 0, deadlineErr }
			dropped, err := run(pastDeadline{context.Background()}, call)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Equal(t, uint64(0), dropped(), "the caller's deadline is no drop")

			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			dropped, err = run(ctx, call)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			assert.NotZero(t, dropped(), "a deadline not the caller's is a drop")
		})
	}
}
