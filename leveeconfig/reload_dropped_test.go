package leveeconfig_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/leveeconfig"
)

// An instance the new file no longer declares loses its instance config: made again later (after
// its removal from the registry), it follows the new file's default, not the old file.
func TestReloadForgetsTheInstanceConfigsOfDroppedInstances(t *testing.T) {
	const old = "resilience4j:\n  retry:\n    instances:\n      payment:\n        maxAttempts: 7\n"
	const next = "resilience4j:\n  retry:\n    configs:\n      default:\n        maxAttempts: 2\n    instances:\n      stock: {}\n"
	c, err := leveeconfig.Parse("old.yml", []byte(old), leveeconfig.Options{})
	require.NoError(t, err)
	r, err := c.Registry()
	require.NoError(t, err)
	n, err := leveeconfig.Parse("next.yml", []byte(next), leveeconfig.Options{})
	require.NoError(t, err)
	_, err = c.Reload(r, n)
	require.NoError(t, err)

	cfg, err := r.RetryConfigFor("payment")
	require.NoError(t, err)
	assert.Equal(t, 2, cfg.MaxAttempts)
	cfg, err = r.RetryConfigFor("stock")
	require.NoError(t, err)
	assert.Equal(t, 2, cfg.MaxAttempts)
}
