package levee_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

func validConfigs() levee.Configs {
	return levee.Configs{
		Retry:          &retry.Config{MaxAttempts: 4, WaitDuration: 20 * time.Millisecond},
		CircuitBreaker: &circuitbreaker.Config{SlidingWindowSize: 20, MinimumNumberOfCalls: 10},
		RateLimiter:    &ratelimiter.Config{LimitForPeriod: 10, LimitRefreshPeriod: time.Second},
		TimeLimiter:    &timelimiter.Config{TimeoutDuration: 2 * time.Second},
		Bulkhead:       &bulkhead.Config{MaxConcurrentCalls: 3},
	}
}

func TestNewPatternsBuildsEveryConfiguredPattern(t *testing.T) {
	ps, err := levee.NewPatterns("payment", validConfigs())
	require.NoError(t, err)
	require.NotNil(t, ps.Retry)
	require.NotNil(t, ps.CircuitBreaker)
	require.NotNil(t, ps.RateLimiter)
	require.NotNil(t, ps.TimeLimiter)
	require.NotNil(t, ps.Bulkhead)
	assert.Equal(t, []string{"payment", "payment", "payment", "payment", "payment"},
		[]string{ps.Retry.Name(), ps.CircuitBreaker.Name(), ps.RateLimiter.Name(), ps.TimeLimiter.Name(), ps.Bulkhead.Name()})
	assert.Equal(t, 4, ps.Retry.Config().MaxAttempts)
	assert.Equal(t, 20*time.Millisecond, ps.Retry.Config().WaitDuration)
	assert.Equal(t, 20, ps.CircuitBreaker.Config().SlidingWindowSize)
	assert.Equal(t, 10, ps.CircuitBreaker.Config().MinimumNumberOfCalls)
	assert.Equal(t, 10, ps.RateLimiter.Config().LimitForPeriod)
	assert.Equal(t, time.Second, ps.RateLimiter.Config().LimitRefreshPeriod)
	assert.Equal(t, 2*time.Second, ps.TimeLimiter.Config().TimeoutDuration)
	assert.Equal(t, 3, ps.Bulkhead.Config().MaxConcurrentCalls)

	// The patterns are the ones each package's New builds from the same config.
	cb, err := circuitbreaker.New("payment", *validConfigs().CircuitBreaker)
	require.NoError(t, err)
	assert.Equal(t, cb.Config(), ps.CircuitBreaker.Config())
}

func TestNewPatternsLeavesOutWhatHasNoConfig(t *testing.T) {
	ps, err := levee.NewPatterns("payment", levee.Configs{})
	require.NoError(t, err)
	assert.Equal(t, levee.Patterns{}, ps)

	ps, err = levee.NewPatterns("payment", levee.Configs{Bulkhead: &bulkhead.Config{}})
	require.NoError(t, err)
	assert.Nil(t, ps.Retry)
	assert.Nil(t, ps.CircuitBreaker)
	assert.Nil(t, ps.RateLimiter)
	assert.Nil(t, ps.TimeLimiter)
	require.NotNil(t, ps.Bulkhead)
	assert.Equal(t, bulkhead.DefaultConfig(), ps.Bulkhead.Config(), "a zero config means the defaults")
}

// A refused config makes NewPatterns return nothing at all, with New's own error (which names
// the package and the field) behind the dependency's name.
func TestNewPatternsRefusesABadConfig(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spoil  func(c *levee.Configs)
		direct func() error // the same config through the package's New
	}{
		{"retry", func(c *levee.Configs) { c.Retry.MaxAttempts = -3 }, func() error {
			_, err := retry.New("payment", retry.Config{MaxAttempts: -3, WaitDuration: 20 * time.Millisecond})
			return err
		}},
		{"circuitbreaker", func(c *levee.Configs) { c.CircuitBreaker.FailureRateThreshold = 150 }, func() error {
			_, err := circuitbreaker.New("payment", circuitbreaker.Config{SlidingWindowSize: 20, MinimumNumberOfCalls: 10, FailureRateThreshold: 150})
			return err
		}},
		{"ratelimiter", func(c *levee.Configs) { c.RateLimiter.LimitForPeriod = -3 }, func() error {
			_, err := ratelimiter.New("payment", ratelimiter.Config{LimitForPeriod: -3, LimitRefreshPeriod: time.Second})
			return err
		}},
		{"timelimiter", func(c *levee.Configs) { c.TimeLimiter.TimeoutDuration = -2 * time.Second }, func() error {
			_, err := timelimiter.New("payment", timelimiter.Config{TimeoutDuration: -2 * time.Second})
			return err
		}},
		{"bulkhead", func(c *levee.Configs) { c.Bulkhead.MaxConcurrentCalls = bulkhead.MaxConcurrentCallsLimit + 1 }, func() error {
			_, err := bulkhead.New("payment", bulkhead.Config{MaxConcurrentCalls: bulkhead.MaxConcurrentCallsLimit + 1})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := validConfigs()
			tc.spoil(&cfg)
			ps, err := levee.NewPatterns("payment", cfg)
			assert.Equal(t, levee.Patterns{}, ps, "nothing half-built is returned")
			want := tc.direct()
			require.Error(t, want)
			require.EqualError(t, err, `levee: patterns "payment": `+want.Error())
			assert.Equal(t, want.Error(), errors.Unwrap(err).Error())
			assert.Contains(t, want.Error(), tc.name+": ", "New's error names the pattern")
		})
	}
}

func TestNewPatternsErrorNamesThePatternAndTheField(t *testing.T) {
	_, err := levee.NewPatterns("payment", levee.Configs{CircuitBreaker: &circuitbreaker.Config{FailureRateThreshold: 150}})
	assert.EqualError(t, err, `levee: patterns "payment": circuitbreaker: FailureRateThreshold must be in (0, 100], got 150`)
}

// With several refused configs, the first in the order of Configs' fields is reported.
func TestNewPatternsReportsTheFirstRefusedConfig(t *testing.T) {
	cfg := validConfigs()
	cfg.Bulkhead.MaxConcurrentCalls = bulkhead.MaxConcurrentCallsLimit + 1
	cfg.Retry.MaxAttempts = -3
	ps, err := levee.NewPatterns("payment", cfg)
	assert.Equal(t, levee.Patterns{}, ps)
	_, want := retry.New("payment", *cfg.Retry)
	require.Error(t, want)
	assert.EqualError(t, err, `levee: patterns "payment": `+want.Error())
}

// The patterns NewPatterns built work as a whole: one Patterns, one pipeline.
func TestNewPatternsFeedsDefaultPipeline(t *testing.T) {
	ps, err := levee.NewPatterns("payment", validConfigs())
	require.NoError(t, err)
	b := &backend{}
	v, err := levee.DefaultPipeline(ps, newFallback(t, "stale")).Execute(context.Background(), b.call)
	require.NoError(t, err)
	assert.Equal(t, "ok", v)
	assert.Equal(t, 1, ps.CircuitBreaker.Metrics().NumberOfSuccessfulCalls)
	assert.Equal(t, 9, ps.RateLimiter.Metrics().AvailablePermissions)
	assert.Equal(t, 3, ps.Bulkhead.Metrics().AvailableConcurrentCalls)
}

func TestMustReturnsTheValue(t *testing.T) {
	cb := levee.Must(circuitbreaker.New("payment", circuitbreaker.Config{SlidingWindowSize: 7}))
	assert.Equal(t, "payment", cb.Name())
	assert.Equal(t, 7, cb.Config().SlidingWindowSize)
	assert.Equal(t, 42, levee.Must(42, nil))
}

func TestMustPanicsWithTheError(t *testing.T) {
	_, want := circuitbreaker.New("payment", circuitbreaker.Config{FailureRateThreshold: 150})
	require.EqualError(t, want, "circuitbreaker: FailureRateThreshold must be in (0, 100], got 150")
	var got any
	func() {
		defer func() { got = recover() }()
		levee.Must(circuitbreaker.New("payment", circuitbreaker.Config{FailureRateThreshold: 150}))
		t.Error("Must returned")
	}()
	err, ok := got.(error)
	require.True(t, ok, "the panic value is the error itself: %#v", got)
	assert.EqualError(t, err, want.Error())

	sentinel := errors.New("boom")
	assert.PanicsWithValue(t, sentinel, func() { levee.Must(0, sentinel) })
}
