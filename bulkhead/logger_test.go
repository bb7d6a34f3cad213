package bulkhead_test

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/internal/logging/logtest"
)

func rejectedRecord() logtest.Record {
	return logtest.Record{Level: slog.LevelDebug, Msg: "bulkhead call rejected", Attrs: map[string]any{
		"pattern": "bulkhead", "name": "payment", "event": "CALL_REJECTED",
		"err": &bulkhead.BulkheadFullError{Name: "payment"}}}
}

func TestLoggerLogsRejectionsOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, logger := logtest.New(slog.LevelDebug)
		b, err := bulkhead.New("payment", bulkhead.Config{MaxConcurrentCalls: 1, MaxWaitDuration: time.Second, Logger: logger})
		require.NoError(t, err)

		v, err := bulkhead.Execute(context.Background(), b, func(context.Context) (int, error) { return 1, nil })
		require.NoError(t, err)
		require.Equal(t, 1, v)
		assert.Empty(t, h.Records(), "a permitted and finished call is not logged")

		require.True(t, b.TryAcquire())
		require.False(t, b.TryAcquire())
		start := time.Now()
		require.ErrorIs(t, b.Acquire(context.Background()), bulkhead.ErrBulkheadFull)
		assert.Equal(t, time.Second, time.Since(start))
		b.Release()
		assert.Equal(t, []logtest.Record{rejectedRecord(), rejectedRecord()}, h.Records())
	})
}

func TestLoggerSurvivesChangeConfig(t *testing.T) {
	h, logger := logtest.New(slog.LevelDebug)
	b, err := bulkhead.New("payment", bulkhead.Config{MaxConcurrentCalls: 1, Logger: logger})
	require.NoError(t, err)

	cfg := b.Config()
	assert.Same(t, logger, cfg.Logger)
	cfg.MaxConcurrentCalls = bulkhead.NoConcurrentCalls
	require.NoError(t, b.ChangeConfig(cfg))
	require.False(t, b.TryAcquire())
	assert.Equal(t, []logtest.Record{rejectedRecord()}, h.Records(), "one record: the same logger is subscribed once")

	h2, logger2 := logtest.New(slog.LevelDebug)
	cfg.Logger = logger2
	require.NoError(t, b.ChangeConfig(cfg))
	require.False(t, b.TryAcquire())
	assert.Len(t, h.Records(), 1, "the old logger no longer logs")
	assert.Equal(t, []logtest.Record{rejectedRecord()}, h2.Records())
	assert.Same(t, logger2, b.Config().Logger)
}
