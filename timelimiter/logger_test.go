package timelimiter_test

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/internal/logging/logtest"
	"github.com/levee-go/levee/timelimiter"
)

func TestLoggerLogsTimeoutsOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, logger := logtest.New(slog.LevelDebug)
		tl, err := timelimiter.New("payment", timelimiter.Config{TimeoutDuration: time.Second, Logger: logger})
		require.NoError(t, err)
		assert.Same(t, logger, tl.Config().Logger)

		_, err = timelimiter.Execute(context.Background(), tl, sleeper(time.Millisecond, 1, nil))
		require.NoError(t, err)
		_, err = timelimiter.Execute(context.Background(), tl, sleeper(time.Millisecond, 0, errBoom))
		require.ErrorIs(t, err, errBoom)
		assert.Empty(t, h.Records(), "calls that end in time are not logged")

		_, timeout := timelimiter.Execute(context.Background(), tl, sleeper(2*time.Second, 1, nil))
		require.ErrorIs(t, timeout, timelimiter.ErrTimeout)
		assert.Equal(t, []logtest.Record{
			{Level: slog.LevelDebug, Msg: "time limiter call timed out", Attrs: map[string]any{
				"pattern": "timelimiter", "name": "payment", "event": "TIMEOUT", "err": timeout}},
		}, h.Records())
		time.Sleep(time.Second) // the abandoned call ends
	})
}
