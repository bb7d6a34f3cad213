package registry_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/registry"
)

// A subscriber that panics must not break the change that published the event, nor keep
// the later subscribers (the observers) from seeing it.
func TestPanickingSubscriberBreaksNeitherTheChangeNorTheOtherSubscribers(t *testing.T) {
	reg := registry.New()
	reg.Subscribe(func(registry.Event) { panic("subscriber bug") })
	var got []string
	reg.Subscribe(func(e registry.Event) { got = append(got, e.Type.String()+" "+e.Name) })

	assert.NotPanics(t, func() { require.NoError(t, reg.AddCircuitBreaker(breaker(t, "a"))) })
	assert.NotPanics(t, func() {
		_, err := reg.CircuitBreaker("b")
		require.NoError(t, err)
	})
	assert.NotPanics(t, func() {
		_, _, err := reg.ReplaceCircuitBreaker(breaker(t, "a"))
		require.NoError(t, err)
	})
	assert.NotPanics(t, func() { reg.RemoveCircuitBreaker("b") })
	assert.Equal(t, []string{"ADDED a", "ADDED b", "REPLACED a", "REMOVED b"}, got)
}

func TestOddNames(t *testing.T) {
	reg := registry.New()
	for _, name := range []string{"", "a/b", "ünï cödé", "with space", "100%", "../x", "\x00"} {
		cb, err := reg.CircuitBreaker(name)
		require.NoError(t, err)
		assert.Equal(t, name, cb.Name())
		found, ok := reg.FindCircuitBreaker(name)
		assert.True(t, ok)
		assert.Same(t, cb, found)
	}
}

// A subscriber may unsubscribe itself, or subscribe another, from its callback: a one-shot
// subscriber must not hang the change that calls it.
func TestSubscriberUnsubscribesItselfFromItsCallback(t *testing.T) {
	reg := registry.New()
	var got []string
	var unsub func()
	unsub = reg.Subscribe(func(e registry.Event) {
		got = append(got, "once "+e.Name)
		unsub()
		reg.Subscribe(func(e registry.Event) { got = append(got, "later "+e.Name) })
	})
	require.NoError(t, reg.AddCircuitBreaker(breaker(t, "a")))
	require.NoError(t, reg.AddCircuitBreaker(breaker(t, "b")))
	assert.Equal(t, []string{"once a", "later b"}, got)
}
