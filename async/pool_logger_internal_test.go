package async

import (
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPoolNilLoggerSubscribesNothing(t *testing.T) {
	p, err := NewWorkerPool("pool", WorkerPoolConfig{})
	require.NoError(t, err)
	defer func() { _ = p.Close() }()
	assert.False(t, p.events.Active())

	logged, err := NewWorkerPool("pool", WorkerPoolConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	defer func() { _ = logged.Close() }()
	assert.True(t, logged.events.Active())
}
