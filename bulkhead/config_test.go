package bulkhead_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/bulkhead"
)

func newBulkhead(t *testing.T, cfg bulkhead.Config) *bulkhead.Bulkhead {
	t.Helper()
	b, err := bulkhead.New("test", cfg)
	require.NoError(t, err)
	return b
}

func TestDefaultConfigHasResilience4jDefaults(t *testing.T) {
	assert.Equal(t, bulkhead.Config{
		MaxConcurrentCalls:      25,
		MaxWaitDuration:         0,
		DisableFairCallHandling: false,
	}, bulkhead.DefaultConfig())
}

func TestNewFillsZeroFieldsWithDefaults(t *testing.T) {
	b := newBulkhead(t, bulkhead.Config{})
	assert.Equal(t, bulkhead.DefaultConfig(), b.Config())
	assert.Equal(t, "test", b.Name())
	assert.Equal(t, bulkhead.Metrics{AvailableConcurrentCalls: 25, MaxAllowedConcurrentCalls: 25}, b.Metrics())
}

func TestNewKeepsGivenConfig(t *testing.T) {
	cfg := bulkhead.Config{MaxConcurrentCalls: 7, MaxWaitDuration: 3 * time.Second, DisableFairCallHandling: true}
	b := newBulkhead(t, cfg)
	assert.Equal(t, cfg, b.Config())
}

// resize changes MaxConcurrentCalls alone, the way the documentation of ChangeConfig shows.
func resize(b *bulkhead.Bulkhead, n int) error {
	cfg := b.Config()
	cfg.MaxConcurrentCalls = n
	return b.ChangeConfig(cfg)
}

// One row per field and rule, with the exact message; ChangeConfig refuses the same values with
// the same messages and leaves the bulkhead as it was.
func TestNewAndChangeConfigRejectInvalidConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  bulkhead.Config
		want string
	}{
		{"MaxConcurrentCalls negative", bulkhead.Config{MaxConcurrentCalls: -2},
			"bulkhead: MaxConcurrentCalls must be in [1, 2147483647] or NoConcurrentCalls (which refuses every call; a bulkhead has no unlimited size), got -2"},
		{"MaxConcurrentCalls -1 is not unlimited", bulkhead.Config{MaxConcurrentCalls: -1},
			"bulkhead: MaxConcurrentCalls must be in [1, 2147483647] or NoConcurrentCalls (which refuses every call; a bulkhead has no unlimited size), got -1"},
		{"MaxConcurrentCalls just above NoConcurrentCalls", bulkhead.Config{MaxConcurrentCalls: bulkhead.NoConcurrentCalls + 1},
			"bulkhead: MaxConcurrentCalls must be in [1, 2147483647] or NoConcurrentCalls (which refuses every call; a bulkhead has no unlimited size), got -9223372036854775807"},
		{"MaxConcurrentCalls above the limit", bulkhead.Config{MaxConcurrentCalls: math.MaxInt32 + 1},
			"bulkhead: MaxConcurrentCalls must be in [1, 2147483647] or NoConcurrentCalls (which refuses every call; a bulkhead has no unlimited size), got 2147483648"},
		{"MaxWaitDuration negative", bulkhead.Config{MaxWaitDuration: -time.Nanosecond},
			"bulkhead: MaxWaitDuration must be >= 0, got -1ns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := bulkhead.New("x", tt.cfg)
			assert.Nil(t, b)
			assert.EqualError(t, err, tt.want)

			kept := bulkhead.Config{MaxConcurrentCalls: 4, MaxWaitDuration: time.Second, DisableFairCallHandling: true}
			b = newBulkhead(t, kept)
			assert.EqualError(t, b.ChangeConfig(tt.cfg), tt.want)
			assert.Equal(t, kept, b.Config(), "a refused change leaves the bulkhead as it was")
		})
	}
}

func TestNewAcceptsBoundaryValues(t *testing.T) {
	for _, n := range []int{1, math.MaxInt32} {
		b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: n})
		assert.Equal(t, n, b.Metrics().AvailableConcurrentCalls)
	}
}

func TestChangeConfigFillsZeroFieldsWithDefaults(t *testing.T) {
	b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 4, MaxWaitDuration: time.Second, DisableFairCallHandling: true})
	require.NoError(t, b.ChangeConfig(bulkhead.Config{}))
	assert.Equal(t, bulkhead.DefaultConfig(), b.Config())
	assert.Equal(t, bulkhead.Metrics{AvailableConcurrentCalls: 25, MaxAllowedConcurrentCalls: 25}, b.Metrics())
}
