package ratelimiter_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/ratelimiter"
)

// TestDrainPredicateNeverSeesRejections: a DrainPermissionsOnResult written the natural way,
// "drain on any error", used to drain the limiter when an inner bulkhead was full or an inner
// breaker open (Resilience4j's order puts both inside the rate limiter): the dependency was
// never called, yet every other caller lost the rest of the cycle. Rejections never reach the
// predicate; ordinary errors still do.
func TestDrainPredicateNeverSeesRejections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen []error
		rl, err := ratelimiter.New("drain", ratelimiter.Config{LimitForPeriod: 5, LimitRefreshPeriod: time.Hour,
			DrainPermissionsOnResult: func(_ any, err error) bool { seen = append(seen, err); return err != nil }})
		require.NoError(t, err)
		bh, err := bulkhead.New("inner", bulkhead.Config{MaxConcurrentCalls: bulkhead.NoConcurrentCalls})
		require.NoError(t, err)

		_, err = ratelimiter.Execute(t.Context(), rl, func(ctx context.Context) (int, error) {
			return bulkhead.Execute(ctx, bh, func(context.Context) (int, error) { return 1, nil })
		})
		require.ErrorIs(t, err, bulkhead.ErrBulkheadFull)
		rl.OnError(circuitbreaker.ErrCallNotPermitted)
		assert.Empty(t, seen)
		assert.Equal(t, 4, rl.Metrics().AvailablePermissions)

		boom := errors.New("429")
		_, err = ratelimiter.Execute(t.Context(), rl, func(context.Context) (int, error) { return 0, boom })
		require.ErrorIs(t, err, boom)
		assert.Equal(t, []error{boom}, seen)
		assert.Equal(t, 0, rl.Metrics().AvailablePermissions)
	})
}
