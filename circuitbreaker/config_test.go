package circuitbreaker_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	cb "github.com/levee-go/levee/circuitbreaker"
)

func TestDefaultConfigHasResilience4jDefaults(t *testing.T) {
	c := cb.DefaultConfig()
	assert.Equal(t, float32(50), c.FailureRateThreshold)
	assert.Equal(t, float32(100), c.SlowCallRateThreshold)
	assert.Equal(t, 60*time.Second, c.SlowCallDurationThreshold)
	assert.Equal(t, cb.CountBased, c.SlidingWindowType)
	assert.Equal(t, 100, c.SlidingWindowSize)
	assert.Equal(t, 100, c.MinimumNumberOfCalls)
	assert.Equal(t, 60*time.Second, c.WaitDurationInOpenState)
	assert.Nil(t, c.WaitIntervalFunctionInOpenState)
	assert.Equal(t, 10, c.PermittedNumberOfCallsInHalfOpenState)
	assert.Equal(t, time.Duration(0), c.MaxWaitDurationInHalfOpenState)
	assert.False(t, c.AutomaticTransitionFromOpenToHalfOpenEnabled)
	assert.Equal(t, cb.OpenAfterWait, c.TransitionToStateAfterWaitDuration)
	assert.Nil(t, c.RecordRejections)
	assert.Nil(t, c.TransitionOnResult)
	assert.Equal(t, cb.Closed, c.InitialState)
}

func TestNewWithZeroConfigUsesDefaults(t *testing.T) {
	b, err := cb.New("payment", cb.Config{})
	require.NoError(t, err)
	assert.Equal(t, "payment", b.Name())
	assert.Equal(t, cb.Closed, b.State())
	assert.Equal(t, cb.DefaultConfig(), b.Config())

	b, err = cb.New("payment", cb.DefaultConfig())
	require.NoError(t, err)
	assert.Equal(t, cb.DefaultConfig(), b.Config())
}

func TestConfigIsACopy(t *testing.T) {
	list := []error{errBoom}
	b := mustNew(t, cb.Config{RecordErrors: list})
	list[0] = errInvalid // the caller's slice changing must not change the breaker
	got := b.Config()
	require.Equal(t, []error{errBoom}, got.RecordErrors)
	got.RecordErrors[0] = errInvalid
	assert.Equal(t, []error{errBoom}, b.Config().RecordErrors)
	require.ErrorIs(t, fail(b), errBoom)
	assert.Equal(t, 1, b.Metrics().NumberOfFailedCalls, "errBoom is still the recorded error")
}

// TestNewRejectsInvalidConfig has one row per field and rule, each with New's exact message.
func TestNewRejectsInvalidConfig(t *testing.T) {
	fn := func(int) time.Duration { return time.Second }
	tests := []struct {
		name string
		cfg  cb.Config
		want string
	}{
		{"FailureRateThreshold above 100", cb.Config{FailureRateThreshold: 150}, "circuitbreaker: FailureRateThreshold must be in (0, 100], got 150"},
		{"FailureRateThreshold negative", cb.Config{FailureRateThreshold: -1}, "circuitbreaker: FailureRateThreshold must be in (0, 100], got -1"},
		{"FailureRateThreshold NaN", cb.Config{FailureRateThreshold: float32(math.NaN())}, "circuitbreaker: FailureRateThreshold must be in (0, 100], got NaN"},
		{"SlowCallRateThreshold above 100", cb.Config{SlowCallRateThreshold: 100.5}, "circuitbreaker: SlowCallRateThreshold must be in (0, 100], got 100.5"},
		{"SlowCallRateThreshold negative", cb.Config{SlowCallRateThreshold: -0.5}, "circuitbreaker: SlowCallRateThreshold must be in (0, 100], got -0.5"},
		{"SlowCallRateThreshold NaN", cb.Config{SlowCallRateThreshold: float32(math.NaN())}, "circuitbreaker: SlowCallRateThreshold must be in (0, 100], got NaN"},
		{"SlowCallDurationThreshold negative", cb.Config{SlowCallDurationThreshold: -time.Second}, "circuitbreaker: SlowCallDurationThreshold must be > 0, got -1s"},
		{"SlidingWindowType unknown", cb.Config{SlidingWindowType: 2}, "circuitbreaker: SlidingWindowType must be CountBased or TimeBased, got SlidingWindowType(2)"},
		{"SlidingWindowType negative", cb.Config{SlidingWindowType: -1}, "circuitbreaker: SlidingWindowType must be CountBased or TimeBased, got SlidingWindowType(-1)"},
		{"SlidingWindowSize negative", cb.Config{SlidingWindowSize: -1}, "circuitbreaker: SlidingWindowSize must be in [1, 1048576], got -1"},
		{"SlidingWindowSize too large", cb.Config{SlidingWindowSize: cb.MaxSlidingWindowSize + 1}, "circuitbreaker: SlidingWindowSize must be in [1, 1048576], got 1048577"},
		{"MinimumNumberOfCalls negative", cb.Config{MinimumNumberOfCalls: -5}, "circuitbreaker: MinimumNumberOfCalls must be >= 1, got -5"},
		{"WaitDurationInOpenState negative", cb.Config{WaitDurationInOpenState: -time.Millisecond}, "circuitbreaker: WaitDurationInOpenState must be >= 1ms, got -1ms"},
		{"WaitDurationInOpenState below 1ms", cb.Config{WaitDurationInOpenState: 999 * time.Microsecond}, "circuitbreaker: WaitDurationInOpenState must be >= 1ms, got 999µs"},
		{"WaitDurationInOpenState and WaitIntervalFunctionInOpenState", cb.Config{WaitDurationInOpenState: time.Second, WaitIntervalFunctionInOpenState: fn}, "circuitbreaker: set WaitDurationInOpenState or WaitIntervalFunctionInOpenState, not both"},
		{"PermittedNumberOfCallsInHalfOpenState negative", cb.Config{PermittedNumberOfCallsInHalfOpenState: -1}, "circuitbreaker: PermittedNumberOfCallsInHalfOpenState must be in [1, 1048576], got -1"},
		{"PermittedNumberOfCallsInHalfOpenState too large", cb.Config{PermittedNumberOfCallsInHalfOpenState: cb.MaxSlidingWindowSize + 1}, "circuitbreaker: PermittedNumberOfCallsInHalfOpenState must be in [1, 1048576], got 1048577"},
		{"MaxWaitDurationInHalfOpenState negative", cb.Config{MaxWaitDurationInHalfOpenState: -time.Second}, "circuitbreaker: MaxWaitDurationInHalfOpenState must be 0 or >= 1ms, got -1s"},
		{"MaxWaitDurationInHalfOpenState below 1ms", cb.Config{MaxWaitDurationInHalfOpenState: time.Microsecond}, "circuitbreaker: MaxWaitDurationInHalfOpenState must be 0 or >= 1ms, got 1µs"},
		{"TransitionToStateAfterWaitDuration unknown", cb.Config{TransitionToStateAfterWaitDuration: 2}, "circuitbreaker: TransitionToStateAfterWaitDuration must be OpenAfterWait or ClosedAfterWait, got StateAfterWait(2)"},
		{"TransitionToStateAfterWaitDuration negative", cb.Config{TransitionToStateAfterWaitDuration: -1}, "circuitbreaker: TransitionToStateAfterWaitDuration must be OpenAfterWait or ClosedAfterWait, got StateAfterWait(-1)"},
		{"InitialState unknown", cb.Config{InitialState: 6}, "circuitbreaker: InitialState must be one of CLOSED, OPEN, HALF_OPEN, DISABLED, FORCED_OPEN, METRICS_ONLY, got State(6)"},
		{"InitialState negative", cb.Config{InitialState: -1}, "circuitbreaker: InitialState must be one of CLOSED, OPEN, HALF_OPEN, DISABLED, FORCED_OPEN, METRICS_ONLY, got State(-1)"},
		{"RecordErrors nil entry", cb.Config{RecordErrors: []error{errBoom, nil}}, "circuitbreaker: RecordErrors[1] is nil; want a sentinel error or levee.ErrorType[E]()"},
		{"RecordErrors typed nil entry", cb.Config{RecordErrors: []error{(*cb.CallNotPermittedError)(nil)}}, "circuitbreaker: RecordErrors[0] is a nil *circuitbreaker.CallNotPermittedError; want a sentinel error or levee.ErrorType[*circuitbreaker.CallNotPermittedError]() for every error of its type"},
		{"RecordErrors rejection", cb.Config{RecordErrors: []error{errBoom, bulkhead.ErrBulkheadFull}}, `circuitbreaker: RecordErrors[1] must not be a levee rejection, got "bulkhead: bulkhead is full"; list it in RecordRejections`},
		{"RecordErrors own rejection", cb.Config{RecordErrors: []error{cb.ErrCallNotPermitted}}, `circuitbreaker: RecordErrors[0] must not be a levee rejection, got "circuitbreaker: call not permitted"; list it in RecordRejections`},
		{"RecordRejections nil entry", cb.Config{RecordRejections: []error{nil}}, "circuitbreaker: RecordRejections[0] is nil; want a sentinel error or levee.ErrorType[E]()"},
		{"RecordRejections typed nil entry", cb.Config{RecordRejections: []error{(*bulkhead.BulkheadFullError)(nil)}}, "circuitbreaker: RecordRejections[0] is a nil *bulkhead.BulkheadFullError; want a sentinel error or levee.ErrorType[*bulkhead.BulkheadFullError]() for every error of its type"},
		{"RecordRejections entry that is no rejection", cb.Config{RecordRejections: []error{bulkhead.ErrBulkheadFull, errBoom}}, `circuitbreaker: RecordRejections[1] must be a levee rejection (levee.IsRejection) or levee.ErrorType[E](), got "boom"; list other errors in RecordErrors`},
		{"IgnoreErrors nil entry", cb.Config{IgnoreErrors: []error{nil}}, "circuitbreaker: IgnoreErrors[0] is nil; want a sentinel error or levee.ErrorType[E]()"},
		{"IgnoreErrors typed nil entry", cb.Config{IgnoreErrors: []error{errBoom, (*cb.IllegalStateTransitionError)(nil)}}, "circuitbreaker: IgnoreErrors[1] is a nil *circuitbreaker.IllegalStateTransitionError; want a sentinel error or levee.ErrorType[*circuitbreaker.IllegalStateTransitionError]() for every error of its type"},
		{"IgnoreErrors rejection", cb.Config{IgnoreErrors: []error{errBoom, bulkhead.ErrBulkheadFull}}, `circuitbreaker: IgnoreErrors[1] must not be a levee rejection, got "bulkhead: bulkhead is full"; a rejection is ignored unless RecordRejections lists it`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := cb.New("test", tt.cfg)
			assert.Nil(t, b)
			assert.EqualError(t, err, tt.want)
		})
	}
}

func TestNewAcceptsBoundaryValues(t *testing.T) {
	fn := func(a int) time.Duration { return time.Duration(a) * time.Second }
	tests := []struct {
		name  string
		cfg   cb.Config
		check func(t *testing.T, c cb.Config)
	}{
		{"thresholds at 100", cb.Config{FailureRateThreshold: 100, SlowCallRateThreshold: 100}, func(t *testing.T, c cb.Config) {
			assert.Equal(t, float32(100), c.FailureRateThreshold)
		}},
		{"tiny thresholds", cb.Config{FailureRateThreshold: 0.001, SlowCallRateThreshold: 0.001}, func(t *testing.T, c cb.Config) {
			assert.Equal(t, float32(0.001), c.SlowCallRateThreshold)
		}},
		{"1ns slow threshold", cb.Config{SlowCallDurationThreshold: 1}, func(t *testing.T, c cb.Config) {
			assert.Equal(t, time.Duration(1), c.SlowCallDurationThreshold)
		}},
		{"window of one", cb.Config{SlidingWindowSize: 1, MinimumNumberOfCalls: 1, PermittedNumberOfCallsInHalfOpenState: 1}, func(t *testing.T, c cb.Config) {
			assert.Equal(t, 1, c.SlidingWindowSize)
			assert.Equal(t, 1, c.MinimumNumberOfCalls, "Config keeps MinimumNumberOfCalls as given; the cap applies when evaluating")
		}},
		{"largest windows", cb.Config{SlidingWindowSize: cb.MaxSlidingWindowSize, PermittedNumberOfCallsInHalfOpenState: cb.MaxSlidingWindowSize}, func(t *testing.T, c cb.Config) {
			assert.Equal(t, cb.MaxSlidingWindowSize, c.SlidingWindowSize)
		}},
		{"largest time window", cb.Config{SlidingWindowType: cb.TimeBased, SlidingWindowSize: cb.MaxSlidingWindowSize}, func(t *testing.T, c cb.Config) {
			assert.Equal(t, cb.TimeBased, c.SlidingWindowType)
		}},
		{"1ms waits", cb.Config{WaitDurationInOpenState: time.Millisecond, MaxWaitDurationInHalfOpenState: time.Millisecond}, func(t *testing.T, c cb.Config) {
			assert.Equal(t, time.Millisecond, c.WaitDurationInOpenState)
			assert.Equal(t, time.Millisecond, c.MaxWaitDurationInHalfOpenState)
		}},
		{"interval function alone", cb.Config{WaitIntervalFunctionInOpenState: fn}, func(t *testing.T, c cb.Config) {
			assert.Equal(t, time.Duration(0), c.WaitDurationInOpenState, "the function replaces the constant wait")
			assert.NotNil(t, c.WaitIntervalFunctionInOpenState)
		}},
		{"every initial state", cb.Config{InitialState: cb.MetricsOnly}, func(t *testing.T, c cb.Config) {
			assert.Equal(t, cb.MetricsOnly, c.InitialState)
		}},
		{"CLOSED after the HALF_OPEN wait", cb.Config{TransitionToStateAfterWaitDuration: cb.ClosedAfterWait}, func(t *testing.T, c cb.Config) {
			assert.Equal(t, cb.ClosedAfterWait, c.TransitionToStateAfterWaitDuration)
		}},
		{"rejections: sentinels and markers", cb.Config{RecordRejections: []error{bulkhead.ErrBulkheadFull, cb.ErrCallNotPermitted, levee.ErrorType[*bulkhead.BulkheadFullError]()}}, func(t *testing.T, c cb.Config) {
			assert.Equal(t, []error{bulkhead.ErrBulkheadFull, cb.ErrCallNotPermitted, c.RecordRejections[2]}, c.RecordRejections)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := cb.New("test", tt.cfg)
			require.NoError(t, err)
			tt.check(t, b.Config())
		})
	}
}

func TestInitialState(t *testing.T) {
	for _, s := range []cb.State{cb.Closed, cb.Open, cb.HalfOpen, cb.Disabled, cb.ForcedOpen, cb.MetricsOnly} {
		t.Run(s.String(), func(t *testing.T) {
			b := mustNew(t, cb.Config{InitialState: s})
			assert.Equal(t, s, b.State())
			m := b.Metrics()
			assert.Equal(t, s, m.State)
			assert.Equal(t, float32(-1), m.FailureRate)
			err := try(b)
			switch s {
			case cb.Open, cb.ForcedOpen:
				assert.ErrorIs(t, err, cb.ErrCallNotPermitted)
			default:
				assert.NoError(t, err)
			}
		})
	}
}
