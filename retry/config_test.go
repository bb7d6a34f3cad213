package retry_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/internal/errmatch"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
)

func TestDefaultConfig(t *testing.T) {
	cfg := retry.DefaultConfig()
	assert.Equal(t, 3, cfg.MaxAttempts)
	assert.Equal(t, 500*time.Millisecond, cfg.WaitDuration)
	assert.Nil(t, cfg.IntervalFunction)
	assert.Nil(t, cfg.IntervalBiFunction)
	assert.Empty(t, cfg.RetryErrors)
	assert.Empty(t, cfg.IgnoreErrors)
	assert.False(t, cfg.FailAfterMaxAttempts)
}

func TestZeroConfigMeansDefaults(t *testing.T) {
	r := newRetry(t, retry.Config{})
	got := r.Config()
	assert.Equal(t, 3, got.MaxAttempts)
	assert.Equal(t, 500*time.Millisecond, got.WaitDuration)
	assert.Equal(t, "test", r.Name())
}

func TestZeroConfigWaitsDefaultInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetry(t, retry.Config{})
		var at []time.Duration
		start := time.Now()
		_, err := retry.Execute(context.Background(), r, func(context.Context) (int, error) {
			at = append(at, time.Since(start))
			return 0, errGateway
		})
		require.ErrorIs(t, err, errGateway)
		assert.Equal(t, []time.Duration{0, 500 * time.Millisecond, time.Second}, at)
	})
}

func TestNoWaitRetriesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetry(t, retry.Config{MaxAttempts: 4, WaitDuration: retry.NoWait})
		assert.Equal(t, retry.NoWait, r.Config().WaitDuration)
		start := time.Now()
		s := newScript(fail(errGateway))
		_, err := retry.Execute(context.Background(), r, s.call)
		require.ErrorIs(t, err, errGateway)
		assert.Equal(t, 4, s.count())
		assert.Equal(t, time.Duration(0), time.Since(start))
	})
}

func TestIntervalFunctionTakesThePlaceOfWaitDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetry(t, retry.Config{
			IntervalFunction: func(attempt int) time.Duration { return time.Duration(attempt) * time.Second },
		})
		assert.Zero(t, r.Config().WaitDuration, "no default filled in: the function gives every wait")
		start := time.Now()
		_, err := retry.Execute(context.Background(), r, newScript(fail(errGateway)).call)
		require.ErrorIs(t, err, errGateway)
		assert.Equal(t, 3*time.Second, time.Since(start)) // 1s + 2s, not 2 × 500ms
	})
}

// TestNewRefusesInvalidConfig has one row per field and rule, with the exact message.
func TestNewRefusesInvalidConfig(t *testing.T) {
	interval := func(int) time.Duration { return time.Second }
	biInterval := func(int, error, any) time.Duration { return time.Second }
	typedNil := (*retry.MaxRetriesExceededError)(nil)
	tests := []struct {
		field string
		name  string
		cfg   retry.Config
		want  string
	}{
		{"name", "", retry.Config{}, "retry: name must not be empty"},
		{"MaxAttempts", "r", retry.Config{MaxAttempts: -1}, "retry: MaxAttempts must be >= 1, got -1"},
		{"WaitDuration", "r", retry.Config{WaitDuration: -2 * time.Millisecond},
			"retry: WaitDuration must be >= 0 (or NoWait for no wait), got -2ms"},
		{"WaitDuration -1 is not NoWait", "r", retry.Config{WaitDuration: -1},
			"retry: WaitDuration must be >= 0 (or NoWait for no wait), got -1ns"},
		{"WaitDuration just above NoWait", "r", retry.Config{WaitDuration: retry.NoWait + 1},
			"retry: WaitDuration must be >= 0 (or NoWait for no wait), got -2562047h47m16.854775807s"},
		{"WaitDuration and IntervalFunction", "r", retry.Config{WaitDuration: time.Second, IntervalFunction: interval},
			"retry: set WaitDuration or IntervalFunction, not both"},
		{"NoWait and IntervalFunction", "r", retry.Config{WaitDuration: retry.NoWait, IntervalFunction: interval},
			"retry: set WaitDuration or IntervalFunction, not both"},
		{"WaitDuration and IntervalBiFunction", "r", retry.Config{WaitDuration: time.Second, IntervalBiFunction: biInterval},
			"retry: set WaitDuration or IntervalBiFunction, not both"},
		{"IntervalFunction and IntervalBiFunction", "r", retry.Config{IntervalFunction: interval, IntervalBiFunction: biInterval},
			"retry: set IntervalFunction or IntervalBiFunction, not both"},
		{"RetryErrors nil", "r", retry.Config{RetryErrors: []error{errGateway, nil}},
			"retry: RetryErrors[1] is nil; want a sentinel error or levee.ErrorType[E]()"},
		{"RetryErrors typed nil", "r", retry.Config{RetryErrors: []error{typedNil}},
			"retry: RetryErrors[0] is a nil *retry.MaxRetriesExceededError; want a sentinel error or levee.ErrorType[*retry.MaxRetriesExceededError]() for every error of its type"},
		{"RetryErrors rejection", "r", retry.Config{RetryErrors: []error{errGateway, circuitbreaker.ErrCallNotPermitted}},
			`retry: RetryErrors[1] must not be a levee rejection, got "circuitbreaker: call not permitted"; list it in RetryRejections`},
		{"IgnoreErrors nil", "r", retry.Config{IgnoreErrors: []error{nil}},
			"retry: IgnoreErrors[0] is nil; want a sentinel error or levee.ErrorType[E]()"},
		{"IgnoreErrors typed nil", "r", retry.Config{IgnoreErrors: []error{errGateway, typedNil}},
			"retry: IgnoreErrors[1] is a nil *retry.MaxRetriesExceededError; want a sentinel error or levee.ErrorType[*retry.MaxRetriesExceededError]() for every error of its type"},
		{"IgnoreErrors rejection", "r", retry.Config{IgnoreErrors: []error{errRejected}},
			`retry: IgnoreErrors[0] must not be a levee rejection, got "breaker: call not permitted"; a rejection is not retried unless RetryRejections lists it`},
		{"RetryRejections nil", "r", retry.Config{RetryRejections: []error{circuitbreaker.ErrCallNotPermitted, nil}},
			"retry: RetryRejections[1] is nil; want a sentinel error or levee.ErrorType[E]()"},
		{"RetryRejections typed nil", "r", retry.Config{RetryRejections: []error{(*circuitbreaker.CallNotPermittedError)(nil)}},
			"retry: RetryRejections[0] is a nil *circuitbreaker.CallNotPermittedError; want a sentinel error or levee.ErrorType[*circuitbreaker.CallNotPermittedError]() for every error of its type"},
		{"RetryRejections not a rejection", "r", retry.Config{RetryRejections: []error{errRejected, errGateway}},
			`retry: RetryRejections[1] must be a levee rejection (levee.IsRejection) or levee.ErrorType[E](), got "gateway 503"; list other errors in RetryErrors`},
		{"MaxDuration", "r", retry.Config{MaxDuration: -time.Second},
			"retry: MaxDuration must be >= 0 (0 for no limit), got -1s"},
		{"MaxDuration one nanosecond below 0", "r", retry.Config{MaxDuration: -1},
			"retry: MaxDuration must be >= 0 (0 for no limit), got -1ns"},
		{"RetryRejections breaker sentinel that is not a rejection", "r", retry.Config{RetryRejections: []error{circuitbreaker.ErrIllegalStateTransition}},
			`retry: RetryRejections[0] must be a levee rejection (levee.IsRejection) or levee.ErrorType[E](), got "circuitbreaker: illegal state transition"; list other errors in RetryErrors`},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			r, err := retry.New(tt.name, tt.cfg)
			assert.Nil(t, r)
			assert.EqualError(t, err, tt.want)
		})
	}
}

func TestNewAcceptsBoundaryValues(t *testing.T) {
	for _, cfg := range []retry.Config{
		{MaxAttempts: 1},
		{WaitDuration: time.Nanosecond},
		{WaitDuration: retry.NoWait},
		{IntervalFunction: func(int) time.Duration { return 0 }},
		{IntervalBiFunction: func(int, error, any) time.Duration { return 0 }},
		{MaxDuration: time.Nanosecond},
		{RetryErrors: []error{errGateway, errmatch.Type[*httpError]()}},
		{RetryErrors: []error{errmatch.Type[*circuitbreaker.CallNotPermittedError]()}}, // a type: not checked
		{RetryRejections: []error{circuitbreaker.ErrCallNotPermitted, bulkhead.ErrBulkheadFull, ratelimiter.ErrRequestNotPermitted}},
		{RetryRejections: []error{errmatch.Type[*circuitbreaker.CallNotPermittedError](), errRejected}},
	} {
		_, err := retry.New("r", cfg)
		assert.NoError(t, err)
	}
}

// TestConfigRoundTrips: what Config returns, New accepts, with the same behaviour.
func TestConfigRoundTrips(t *testing.T) {
	budget, err := retry.NewBudget(retry.BudgetConfig{})
	require.NoError(t, err)
	withLimits := newRetry(t, retry.Config{MaxDuration: time.Minute, Budget: budget})
	again, err := retry.New("again", withLimits.Config())
	require.NoError(t, err)
	assert.Equal(t, time.Minute, again.Config().MaxDuration)
	assert.Same(t, budget, again.Config().Budget, "the budget is shared, not copied")

	for _, cfg := range []retry.Config{
		{},
		{WaitDuration: retry.NoWait, RetryRejections: []error{circuitbreaker.ErrCallNotPermitted}},
		{IntervalFunction: func(int) time.Duration { return time.Second }},
		{IntervalBiFunction: func(int, error, any) time.Duration { return time.Second }},
	} {
		r := newRetry(t, cfg)
		again, err := retry.New("again", r.Config())
		require.NoError(t, err)
		assert.Equal(t, r.Config().WaitDuration, again.Config().WaitDuration)
		assert.Equal(t, r.Config().RetryRejections, again.Config().RetryRejections)
	}
}

func TestConfigReturnsCopies(t *testing.T) {
	list := []error{errGateway}
	rejections := []error{errRejected}
	r := newRetry(t, retry.Config{WaitDuration: retry.NoWait, RetryErrors: list, IgnoreErrors: []error{errInvalid},
		RetryRejections: rejections})
	list[0] = errInvalid // the caller's slices change after New: r must not see it
	rejections[0] = circuitbreaker.ErrCallNotPermitted
	got := r.Config()
	require.Equal(t, []error{errGateway}, got.RetryErrors)
	got.RetryErrors[0] = errors.New("changed")
	got.IgnoreErrors[0] = errors.New("changed")
	got.RetryRejections[0] = errors.New("changed")
	assert.Equal(t, []error{errGateway}, r.Config().RetryErrors)
	assert.Equal(t, []error{errInvalid}, r.Config().IgnoreErrors)
	assert.Equal(t, []error{errRejected}, r.Config().RetryRejections)

	s := newScript(fail(errGateway), ok("done"))
	v, err := retry.Execute(context.Background(), r, s.call)
	require.NoError(t, err)
	assert.Equal(t, "done", v)
	assert.Equal(t, 2, s.count())
}

func TestNilRetryIsHarmless(t *testing.T) {
	var r *retry.Retry
	assert.Equal(t, "", r.Name())
	assert.Equal(t, retry.Config{}, r.Config())
	assert.Equal(t, retry.Metrics{}, r.Metrics())
	r.Subscribe(func(retry.Event) {})()
	c := r.NewContext()
	wait, again := c.OnError(errGateway)
	assert.Zero(t, wait)
	assert.False(t, again)
	c.OnSuccess()
	assert.NoError(t, c.Err())
}
