package ratelimiter_test

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/internal/logging/logtest"
	"github.com/levee-go/levee/ratelimiter"
)

func TestLoggerLogsRefusalsAndDrains(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, logger := logtest.New(slog.LevelDebug)
		rl, err := ratelimiter.New("payment", ratelimiter.Config{LimitForPeriod: 1, LimitRefreshPeriod: time.Second,
			TimeoutDuration: ratelimiter.NoWait, Logger: logger})
		require.NoError(t, err)

		require.NoError(t, rl.AcquirePermission(context.Background(), 1))
		assert.Empty(t, h.Records(), "a successful acquisition is not logged")
		refused := rl.AcquirePermission(context.Background(), 1)
		require.ErrorIs(t, refused, ratelimiter.ErrRequestNotPermitted)

		time.Sleep(time.Second)
		rl.DrainPermissions()

		require.NoError(t, rl.ChangeTimeoutDuration(5*time.Second))
		ctx, cancel := cancelAfter(context.Background(), 100*time.Millisecond)
		defer cancel()
		require.ErrorIs(t, rl.AcquirePermission(ctx, 1), context.Canceled)

		assert.Equal(t, []logtest.Record{
			{Level: slog.LevelDebug, Msg: "rate limiter permission not acquired", Attrs: map[string]any{
				"pattern": "ratelimiter", "name": "payment", "event": "FAILED_ACQUIRE", "err": refused}},
			{Level: slog.LevelDebug, Msg: "rate limiter permissions drained", Attrs: map[string]any{
				"pattern": "ratelimiter", "name": "payment", "event": "DRAINED"}},
			{Level: slog.LevelDebug, Msg: "rate limiter permission not acquired", Attrs: map[string]any{
				"pattern": "ratelimiter", "name": "payment", "event": "FAILED_ACQUIRE", "err": context.Canceled}},
		}, h.Records())
		assert.Same(t, logger, rl.Config().Logger, "the Change methods keep the logger")
	})
}

func TestLoggerAtInfoLogsNothing(t *testing.T) {
	h, logger := logtest.New(slog.LevelInfo)
	rl, err := ratelimiter.New("payment", ratelimiter.Config{LimitForPeriod: 1, LimitRefreshPeriod: time.Hour,
		TimeoutDuration: ratelimiter.NoWait, Logger: logger})
	require.NoError(t, err)
	require.NoError(t, rl.AcquirePermission(context.Background(), 1))
	assert.Equal(t, 0.0, testing.AllocsPerRun(100, func() {
		if rl.AcquirePermission(context.Background(), 1) == nil {
			panic("permitted")
		}
	}), "a refusal whose level is disabled allocates nothing")
	assert.Empty(t, h.Records())
}
