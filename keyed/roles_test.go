package keyed_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/keyed"
	"github.com/levee-go/levee/ratelimiter"
)

type tenantKey struct{}

func tenant(ctx context.Context) string { s, _ := ctx.Value(tenantKey{}).(string); return s }

func forTenant(name string) context.Context {
	return context.WithValue(context.Background(), tenantKey{}, name)
}

var errDown = errors.New("down")

// A breaker per tenant, in a pipeline's breaker place: one tenant's failures open its own
// breaker only.
func TestCircuitBreakersOpenPerKey(t *testing.T) {
	k, err := keyed.New(keyed.Config{}, func(name string) (*circuitbreaker.CircuitBreaker, error) {
		return circuitbreaker.New(name, circuitbreaker.Config{SlidingWindowSize: 2, MinimumNumberOfCalls: 2})
	})
	require.NoError(t, err)
	p := levee.Compose[string]().WithAdmission(keyed.CircuitBreakers(k, tenant))
	fail := func(context.Context) (string, error) { return "", errDown }
	ok := func(context.Context) (string, error) { return "ok", nil }
	for range 2 {
		_, err = p.Execute(forTenant("a"), fail)
		require.ErrorIs(t, err, errDown)
	}
	_, err = p.Execute(forTenant("a"), ok)
	require.ErrorIs(t, err, circuitbreaker.ErrCallNotPermitted)
	v, err := p.Execute(forTenant("b"), ok)
	require.NoError(t, err)
	assert.Equal(t, "ok", v)
	a, err := k.Get("a")
	require.NoError(t, err)
	assert.Equal(t, circuitbreaker.Open, a.State())
	b, err := k.Get("b")
	require.NoError(t, err)
	assert.Equal(t, 1, b.Metrics().NumberOfSuccessfulCalls)
}

// A rate limiter per tenant, in a pipeline's rate-limiter place: one tenant's permissions
// are its own.
func TestLimitersPerKey(t *testing.T) {
	k, err := keyed.New(keyed.Config{}, func(name string) (*ratelimiter.RateLimiter, error) {
		return ratelimiter.New(name, ratelimiter.Config{LimitForPeriod: 1, LimitRefreshPeriod: time.Hour, TimeoutDuration: ratelimiter.NoWait})
	})
	require.NoError(t, err)
	p := levee.Compose[string]().WithPermissionLimiter(keyed.Limiters(k, tenant))
	ok := func(context.Context) (string, error) { return "ok", nil }
	_, err = p.Execute(forTenant("a"), ok)
	require.NoError(t, err)
	_, err = p.Execute(forTenant("a"), ok)
	require.ErrorIs(t, err, ratelimiter.ErrRequestNotPermitted)
	_, err = p.Execute(forTenant("b"), ok)
	require.NoError(t, err)
}
