package bulkhead

import (
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNilLoggerSubscribesNothing(t *testing.T) {
	b, err := New("payment", Config{})
	require.NoError(t, err)
	assert.False(t, b.events.Active())

	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	require.NoError(t, b.ChangeConfig(Config{Logger: logger}))
	assert.True(t, b.events.Active())
	require.NoError(t, b.ChangeConfig(Config{}))
	assert.False(t, b.events.Active(), "a nil Logger given to ChangeConfig removes the consumer")
	assert.Nil(t, b.Config().Logger)
}
