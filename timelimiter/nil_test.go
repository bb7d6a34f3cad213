package timelimiter_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/timelimiter"
)

// Every exported method of a nil *TimeLimiter does nothing or returns a zero value instead of
// panicking.
func TestNilTimeLimiterMethodsDoNotPanic(t *testing.T) {
	var tl *timelimiter.TimeLimiter
	tests := []struct {
		name string
		call func(t *testing.T)
	}{
		{"OnSuccess", func(*testing.T) { tl.OnSuccess(time.Second) }},
		{"OnError", func(*testing.T) { tl.OnError(time.Second, errors.New("boom")) }},
		{"OnError/nil", func(*testing.T) { tl.OnError(time.Second, nil) }},
		{"OnError/timeout", func(*testing.T) { tl.OnError(time.Second, timelimiter.ErrTimeout) }},
		{"Metrics", func(t *testing.T) { assert.Equal(t, timelimiter.Metrics{}, tl.Metrics()) }},
		{"Subscribe", func(t *testing.T) {
			unsubscribe := tl.Subscribe(func(timelimiter.Event) { t.Error("event from a nil time limiter") })
			assert.NotNil(t, unsubscribe)
			unsubscribe()
		}},
		{"Name", func(t *testing.T) { assert.Equal(t, "", tl.Name()) }},
		{"Config", func(t *testing.T) { assert.Equal(t, timelimiter.Config{}, tl.Config()) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.NotPanics(t, func() { tt.call(t) })
		})
	}
}
