package timelimiter_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/timelimiter"
)

func newLimiter(t *testing.T, cfg timelimiter.Config) *timelimiter.TimeLimiter {
	t.Helper()
	tl, err := timelimiter.New("test", cfg)
	require.NoError(t, err)
	return tl
}

func TestDefaultConfigHasResilience4jDefaults(t *testing.T) {
	assert.Equal(t, timelimiter.Config{TimeoutDuration: time.Second, DisableCancelRunningFuture: false}, timelimiter.DefaultConfig())
}

func TestNewFillsZeroFieldsWithDefaults(t *testing.T) {
	tl := newLimiter(t, timelimiter.Config{})
	assert.Equal(t, timelimiter.DefaultConfig(), tl.Config())
	assert.Equal(t, "test", tl.Name())
	assert.Equal(t, timelimiter.Metrics{}, tl.Metrics())
}

func TestNewKeepsGivenConfig(t *testing.T) {
	cfg := timelimiter.Config{TimeoutDuration: time.Nanosecond, DisableCancelRunningFuture: true}
	assert.Equal(t, cfg, newLimiter(t, cfg).Config())
}

func TestNewRejectsInvalidConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  timelimiter.Config
		want string
	}{
		{"TimeoutDuration negative", timelimiter.Config{TimeoutDuration: -time.Nanosecond},
			"timelimiter: TimeoutDuration must be > 0, got -1ns"},
		{"TimeoutDuration very negative", timelimiter.Config{TimeoutDuration: -time.Hour, DisableCancelRunningFuture: true},
			"timelimiter: TimeoutDuration must be > 0, got -1h0m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl, err := timelimiter.New("x", tt.cfg)
			assert.Nil(t, tl)
			assert.EqualError(t, err, tt.want)
		})
	}
}
