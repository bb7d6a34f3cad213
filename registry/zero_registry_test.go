package registry_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/retry"
)

// The zero Registry is an empty one: every method works on it as on New's, with no panic.
func TestZeroRegistryIsEmptyAndUsable(t *testing.T) {
	var r registry.Registry
	assert.Empty(t, r.CircuitBreakers())
	_, ok := r.FindCircuitBreaker("payment")
	assert.False(t, ok)
	_, ok = r.RemoveRetry("payment")
	assert.False(t, ok)

	var events []registry.EventType
	unsubscribe := r.Subscribe(func(e registry.Event) { events = append(events, e.Type) })
	defer unsubscribe()

	cb := breaker(t, "payment")
	require.NoError(t, r.AddCircuitBreaker(cb))
	got, ok := r.FindCircuitBreaker("payment")
	require.True(t, ok)
	assert.Same(t, cb, got)
	require.NoError(t, r.SetTags(registry.CircuitBreaker, "payment", map[string]string{"team": "pay"}))
	assert.Equal(t, map[string]string{"team": "pay"}, r.Tags(registry.CircuitBreaker, "payment"))

	var r2 registry.Registry
	r2.SetRetryConfig("default", retry.Config{MaxAttempts: 5})
	rt, err := r2.Retry("inventory")
	require.NoError(t, err)
	assert.Equal(t, 5, rt.Config().MaxAttempts)

	var r3 registry.Registry
	r3.ConfigureCircuitBreaker("orders", registry.InstanceConfig[circuitbreaker.Config]{
		Tune: func(c *circuitbreaker.Config) { c.FailureRateThreshold = 25 },
		Tags: map[string]string{"team": "orders"},
	})
	ob, err := r3.CircuitBreaker("orders")
	require.NoError(t, err)
	assert.Equal(t, float32(25), ob.Config().FailureRateThreshold)
	assert.Equal(t, map[string]string{"team": "orders"}, r3.Tags(registry.CircuitBreaker, "orders"))

	_, _, err = r.ReplaceCircuitBreaker(breaker(t, "payment"))
	require.NoError(t, err)
	assert.Equal(t, []registry.EventType{registry.EntryAdded, registry.EntryReplaced}, events)
}
