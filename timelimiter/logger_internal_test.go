package timelimiter

import (
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNilLoggerSubscribesNothing(t *testing.T) {
	tl, err := New("payment", Config{})
	require.NoError(t, err)
	assert.False(t, tl.events.Active())

	logged, err := New("payment", Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	assert.True(t, logged.events.Active())
}
