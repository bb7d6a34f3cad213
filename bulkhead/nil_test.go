package bulkhead_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/bulkhead"
)

// Every exported method of a nil *Bulkhead returns ErrNilBulkhead or a zero value instead of
// panicking.
func TestNilBulkheadMethodsDoNotPanic(t *testing.T) {
	var b *bulkhead.Bulkhead
	tests := []struct {
		name string
		call func(t *testing.T)
	}{
		{"Acquire", func(t *testing.T) {
			assert.ErrorIs(t, b.Acquire(context.Background()), bulkhead.ErrNilBulkhead)
		}},
		{"TryAcquire", func(t *testing.T) { assert.False(t, b.TryAcquire()) }},
		{"Release", func(*testing.T) { b.Release() }},
		{"ReleasePermission", func(*testing.T) { b.ReleasePermission() }},
		{"ChangeConfig", func(t *testing.T) {
			assert.ErrorIs(t, b.ChangeConfig(bulkhead.Config{}), bulkhead.ErrNilBulkhead)
		}},
		{"Metrics", func(t *testing.T) { assert.Equal(t, bulkhead.Metrics{}, b.Metrics()) }},
		{"Subscribe", func(t *testing.T) {
			unsubscribe := b.Subscribe(func(bulkhead.Event) { t.Error("event from a nil bulkhead") })
			assert.NotNil(t, unsubscribe)
			unsubscribe()
		}},
		{"Name", func(t *testing.T) { assert.Equal(t, "", b.Name()) }},
		{"Config", func(t *testing.T) { assert.Equal(t, bulkhead.Config{}, b.Config()) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.NotPanics(t, func() { tt.call(t) })
		})
	}
}
