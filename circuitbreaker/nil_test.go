package circuitbreaker_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	cb "github.com/levee-go/levee/circuitbreaker"
)

// Every exported method of a nil *CircuitBreaker returns ErrNilCircuitBreaker or a zero value
// instead of panicking.
func TestNilCircuitBreakerMethodsDoNotPanic(t *testing.T) {
	var b *cb.CircuitBreaker
	nilErr := func(f func() error) func(t *testing.T) {
		return func(t *testing.T) { assert.ErrorIs(t, f(), cb.ErrNilCircuitBreaker) }
	}
	tests := []struct {
		name string
		call func(t *testing.T)
	}{
		{"Acquire", nilErr(func() error { _, err := b.Acquire(); return err })},
		{"zero Permit Release", func(*testing.T) { cb.Permit{}.Release() }},
		{"zero Permit OnSuccess", func(*testing.T) { cb.Permit{}.OnSuccess() }},
		{"zero Permit OnError", func(*testing.T) { cb.Permit{}.OnError(errBoom) }},
		{"zero Permit OnResult", func(*testing.T) { cb.Permit{}.OnResult(1, nil) }},
		{"zero Permit OnResult/error", func(*testing.T) { cb.Permit{}.OnResult(nil, errBoom) }},
		{"State", func(t *testing.T) { assert.Equal(t, cb.State(0), b.State()) }},
		{"Metrics", func(t *testing.T) { assert.Equal(t, cb.Metrics{}, b.Metrics()) }},
		{"TransitionToClosedState", nilErr(b.TransitionToClosedState)},
		{"TransitionToOpenState", nilErr(b.TransitionToOpenState)},
		{"TransitionToOpenStateFor", nilErr(func() error { return b.TransitionToOpenStateFor(time.Second) })},
		{"TransitionToOpenStateUntil", nilErr(func() error { return b.TransitionToOpenStateUntil(time.Now()) })},
		{"TransitionToHalfOpenState", nilErr(b.TransitionToHalfOpenState)},
		{"TransitionToDisabledState", nilErr(b.TransitionToDisabledState)},
		{"TransitionToMetricsOnlyState", nilErr(b.TransitionToMetricsOnlyState)},
		{"TransitionToForcedOpenState", nilErr(b.TransitionToForcedOpenState)},
		{"Reset", func(*testing.T) { b.Reset() }},
		{"Subscribe", func(t *testing.T) {
			unsubscribe := b.Subscribe(func(cb.Event) { t.Error("event from a nil breaker") })
			assert.NotNil(t, unsubscribe)
			unsubscribe()
		}},
		{"Name", func(t *testing.T) { assert.Equal(t, "", b.Name()) }},
		{"Config", func(t *testing.T) { assert.Equal(t, cb.Config{}, b.Config()) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.NotPanics(t, func() { tt.call(t) })
		})
	}
}
