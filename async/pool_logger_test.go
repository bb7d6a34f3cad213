package async_test

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/internal/logging/logtest"
)

func TestPoolLoggerLogsRejectionsAsABulkhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, logger := logtest.New(slog.LevelDebug)
		pool := newPool(t, async.WorkerPoolConfig{CoreThreadPoolSize: 1, MaxThreadPoolSize: 1,
			QueueCapacity: async.NoQueue, Logger: logger})
		assert.Same(t, logger, pool.Config().Logger)

		slow := submit(t, pool, func(context.Context) (int, error) { time.Sleep(time.Second); return 1, nil })
		_, err := async.Submit(context.Background(), pool, nil, value(2))
		require.ErrorIs(t, err, bulkhead.ErrBulkheadFull)
		v, err := slow.Get(context.Background())
		require.NoError(t, err)
		require.Equal(t, 1, v)

		assert.Equal(t, []logtest.Record{
			{Level: slog.LevelDebug, Msg: "bulkhead call rejected", Attrs: map[string]any{
				"pattern": "bulkhead", "name": "pool", "event": "CALL_REJECTED",
				"err": &async.WorkerPoolFullError{Name: "pool"}}},
		}, h.Records(), "the task's start and end are not logged")
	})
}
