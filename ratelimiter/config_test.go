package ratelimiter_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/ratelimiter"
)

func TestDefaultConfigIsResilience4js(t *testing.T) {
	cfg := ratelimiter.DefaultConfig()
	assert.Equal(t, 50, cfg.LimitForPeriod)
	assert.Equal(t, 500*time.Nanosecond, cfg.LimitRefreshPeriod)
	assert.Equal(t, 5*time.Second, cfg.TimeoutDuration)
	assert.Nil(t, cfg.DrainPermissionsOnResult)
}

func TestZeroConfigMeansDefaults(t *testing.T) {
	rl, err := ratelimiter.New("backend", ratelimiter.Config{})
	require.NoError(t, err)
	assert.Equal(t, "backend", rl.Name())
	assert.Equal(t, ratelimiter.DefaultConfig(), rl.Config())
}

func TestNoWaitRoundTrips(t *testing.T) {
	rl, err := ratelimiter.New("backend", ratelimiter.Config{TimeoutDuration: ratelimiter.NoWait})
	require.NoError(t, err)
	cfg := rl.Config()
	assert.Equal(t, ratelimiter.NoWait, cfg.TimeoutDuration)
	again, err := ratelimiter.New("again", cfg)
	require.NoError(t, err)
	assert.Equal(t, ratelimiter.NoWait, again.Config().TimeoutDuration)
}

func TestConfigKeepsDrainPredicate(t *testing.T) {
	called := 0
	rl, err := ratelimiter.New("backend", ratelimiter.Config{
		DrainPermissionsOnResult: func(any, error) bool { called++; return false },
	})
	require.NoError(t, err)
	require.NotNil(t, rl.Config().DrainPermissionsOnResult)
	rl.Config().DrainPermissionsOnResult(nil, nil)
	assert.Equal(t, 1, called)
}

func TestInvalidConfigIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  ratelimiter.Config
		want string
	}{
		{"LimitForPeriod negative", ratelimiter.Config{LimitForPeriod: -1},
			"ratelimiter: LimitForPeriod must be >= 1, got -1"},
		{"LimitForPeriod min int", ratelimiter.Config{LimitForPeriod: math.MinInt},
			"ratelimiter: LimitForPeriod must be >= 1, got -9223372036854775808"},
		{"LimitRefreshPeriod negative", ratelimiter.Config{LimitRefreshPeriod: -time.Second},
			"ratelimiter: LimitRefreshPeriod must be >= 1ns, got -1s"},
		{"TimeoutDuration negative", ratelimiter.Config{TimeoutDuration: -2},
			"ratelimiter: TimeoutDuration must be >= 0 or NoWait, got -2ns"},
		{"TimeoutDuration -1 is not NoWait", ratelimiter.Config{TimeoutDuration: -1},
			"ratelimiter: TimeoutDuration must be >= 0 or NoWait, got -1ns"},
		{"TimeoutDuration just above NoWait", ratelimiter.Config{TimeoutDuration: ratelimiter.NoWait + 1},
			"ratelimiter: TimeoutDuration must be >= 0 or NoWait, got -2562047h47m16.854775807s"},
		{"LimitForPeriod above MaxReservablePermissions", ratelimiter.Config{LimitForPeriod: 1 << 40},
			"ratelimiter: LimitForPeriod × (TimeoutDuration/LimitRefreshPeriod + 2) must be at most " +
				"1099511627776 (MaxReservablePermissions), got 1099511627776 × 10000002"},
		{"TimeoutDuration too long for the period", ratelimiter.Config{
			LimitForPeriod: 1, LimitRefreshPeriod: time.Nanosecond, TimeoutDuration: math.MaxInt64},
			"ratelimiter: LimitForPeriod × (TimeoutDuration/LimitRefreshPeriod + 2) must be at most " +
				"1099511627776 (MaxReservablePermissions), got 1 × 9223372036854775809"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rl, err := ratelimiter.New("x", tc.cfg)
			assert.Nil(t, rl)
			assert.EqualError(t, err, tc.want)
		})
	}
}

func TestLargestValidConfigsAreAccepted(t *testing.T) {
	for _, cfg := range []ratelimiter.Config{
		{LimitForPeriod: 1 << 39, LimitRefreshPeriod: time.Nanosecond, TimeoutDuration: ratelimiter.NoWait},
		{LimitForPeriod: 1, LimitRefreshPeriod: time.Nanosecond, TimeoutDuration: (1<<40 - 2) * time.Nanosecond},
		{LimitForPeriod: 1, LimitRefreshPeriod: math.MaxInt64, TimeoutDuration: math.MaxInt64},
		{LimitForPeriod: 1 << 20, LimitRefreshPeriod: time.Hour, TimeoutDuration: 24 * time.Hour},
	} {
		_, err := ratelimiter.New("x", cfg)
		assert.NoError(t, err, "%+v", cfg)
	}
}

func TestInvalidChangesAreRefusedAndChangeNothing(t *testing.T) {
	rl := newLimiter(t, 10, time.Nanosecond, 100*time.Nanosecond)
	for _, tc := range []struct {
		name   string
		change func() error
		want   string
	}{
		{"LimitForPeriod zero", func() error { return rl.ChangeLimitForPeriod(0) },
			"ratelimiter: LimitForPeriod must be >= 1, got 0"},
		{"LimitForPeriod negative", func() error { return rl.ChangeLimitForPeriod(-3) },
			"ratelimiter: LimitForPeriod must be >= 1, got -3"},
		{"LimitForPeriod above MaxReservablePermissions", func() error { return rl.ChangeLimitForPeriod(1 << 34) },
			"ratelimiter: LimitForPeriod × (TimeoutDuration/LimitRefreshPeriod + 2) must be at most " +
				"1099511627776 (MaxReservablePermissions), got 17179869184 × 102"},
		{"TimeoutDuration negative", func() error { return rl.ChangeTimeoutDuration(-time.Second) },
			"ratelimiter: TimeoutDuration must be >= 0 or NoWait, got -1s"},
		{"TimeoutDuration -1 is not NoWait", func() error { return rl.ChangeTimeoutDuration(-1) },
			"ratelimiter: TimeoutDuration must be >= 0 or NoWait, got -1ns"},
		{"TimeoutDuration too long", func() error { return rl.ChangeTimeoutDuration(time.Hour) },
			"ratelimiter: LimitForPeriod × (TimeoutDuration/LimitRefreshPeriod + 2) must be at most " +
				"1099511627776 (MaxReservablePermissions), got 10 × 3600000000002"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.EqualError(t, tc.change(), tc.want)
			cfg := rl.Config()
			assert.Equal(t, 10, cfg.LimitForPeriod)
			assert.Equal(t, 100*time.Nanosecond, cfg.TimeoutDuration)
		})
	}
}

func TestChangesAreVisibleInConfig(t *testing.T) {
	rl := newLimiter(t, 10, time.Second, time.Second)
	require.NoError(t, rl.ChangeLimitForPeriod(3))
	require.NoError(t, rl.ChangeTimeoutDuration(0))
	cfg := rl.Config()
	assert.Equal(t, 3, cfg.LimitForPeriod)
	assert.Equal(t, ratelimiter.NoWait, cfg.TimeoutDuration)
	require.NoError(t, rl.ChangeTimeoutDuration(ratelimiter.NoWait))
	assert.Equal(t, ratelimiter.NoWait, rl.Config().TimeoutDuration)
	require.NoError(t, rl.ChangeTimeoutDuration(2*time.Second))
	assert.Equal(t, 2*time.Second, rl.Config().TimeoutDuration)
}
