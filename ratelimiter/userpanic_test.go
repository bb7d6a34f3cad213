package ratelimiter_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/ratelimiter"
)

// A DrainPermissionsOnResult predicate that panics drains nothing and never crashes the caller.
func TestPanickingDrainPredicateDrainsNothing(t *testing.T) {
	rl, err := ratelimiter.New("rl", ratelimiter.Config{
		LimitForPeriod:           5,
		LimitRefreshPeriod:       time.Hour,
		DrainPermissionsOnResult: func(any, error) bool { panic("predicate bug") },
	})
	require.NoError(t, err)
	v, err := ratelimiter.Execute(context.Background(), rl, func(context.Context) (int, error) { return 1, nil })
	require.NoError(t, err)
	assert.Equal(t, 1, v)
	_, err = ratelimiter.Execute(context.Background(), rl, func(context.Context) (int, error) { return 0, errors.New("x") })
	assert.EqualError(t, err, "x")
	assert.Equal(t, 3, rl.Metrics().AvailablePermissions)
}
