package compose_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

// A retry around a time limiter of 600ms starts no attempt with less than 600ms left before
// the caller's deadline: attempts at 0 and 1s, none at 2s with 500ms left.
func TestRetryExpectsTheTimeLimitersTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := levee.Must(retry.New("dep", retry.Config{MaxAttempts: 10, WaitDuration: time.Second}))
		tl := levee.Must(timelimiter.New("dep", timelimiter.Config{TimeoutDuration: 600 * time.Millisecond}))
		p := levee.DefaultPipeline[int](levee.Patterns{Retry: rt, TimeLimiter: tl}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
		defer cancel()
		calls := 0
		start := time.Now()
		_, err := p.Execute(ctx, func(context.Context) (int, error) { calls++; return 0, errors.New("503") })
		assert.Equal(t, time.Second, time.Since(start))
		assert.Equal(t, 2, calls)
		require.ErrorIs(t, err, retry.ErrCallerDeadline)
	})
}
