package leveehttp_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/leveehttp"
	"github.com/levee-go/levee/retry"
)

// TestRetryConfigKeepsNegativeWaitDurationRefused: a WaitDuration retry.New refuses (a plain
// negative, not retry.NoWait) is still refused once adapted, rather than turned into an
// interval that silently stops retrying; retry.NoWait still means no wait.
func TestRetryConfigKeepsNegativeWaitDurationRefused(t *testing.T) {
	_, err := retry.New("x", leveehttp.RetryConfig(retry.Config{WaitDuration: -time.Second}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "retry: WaitDuration must be >= 0")

	c := leveehttp.RetryConfig(retry.Config{WaitDuration: retry.NoWait})
	_, err = retry.New("x", c)
	require.NoError(t, err)
	assert.Equal(t, time.Duration(0), c.IntervalBiFunction(1, assert.AnError, nil))
}
