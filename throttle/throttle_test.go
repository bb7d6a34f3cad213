package throttle_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/throttle"
)

var errOverloaded = errors.New("503 overloaded")

func newThrottler(t *testing.T, cfg throttle.Config) *throttle.Throttler {
	t.Helper()
	th, err := throttle.New("backend", cfg)
	require.NoError(t, err)
	return th
}

func TestConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		cfg  throttle.Config
		want string
	}{
		{throttle.Config{K: 0.5}, "throttle: K must be in [1, 1e6], got 0.5"},
		{throttle.Config{K: -1}, "throttle: K must be in [1, 1e6], got -1"},
		{throttle.Config{Window: -time.Second}, "throttle: Window must be > 0, got -1s"},
		{throttle.Config{WindowBuckets: -1}, "throttle: WindowBuckets must be in [1, 1000], got -1"},
		{throttle.Config{WindowBuckets: 1001}, "throttle: WindowBuckets must be in [1, 1000], got 1001"},
		{throttle.Config{Window: 5, WindowBuckets: 10}, "throttle: Window must be at least WindowBuckets (10) ns, got 5ns"},
		{throttle.Config{RecordErrors: []error{errOverloaded, nil}}, "throttle: RecordErrors[1] is nil"},
	} {
		th, err := throttle.New("x", tc.cfg)
		assert.Nil(t, th)
		assert.EqualError(t, err, tc.want)
	}
	th := newThrottler(t, throttle.Config{})
	assert.Equal(t, throttle.DefaultConfig(), th.Config())
	assert.Equal(t, throttle.Config{K: 2, Window: 2 * time.Minute, WindowBuckets: 20}, th.Config())
	assert.Equal(t, "backend", th.Name())
}

// The SRE book's formula with exact counts: 10 requests of which 4 accepted give
// (10 − 2 × 4) / 11; the calls the throttler refuses are not requests.
func TestRejectionProbability(t *testing.T) {
	random := 0.99 // above every probability until the counts are in
	th := newThrottler(t, throttle.Config{Random: func() float64 { return random }})
	for i := range 10 {
		p, err := th.Acquire()
		require.NoError(t, err, "call %d", i)
		if i < 4 {
			p.OnSuccess()
		} else {
			p.OnError(errOverloaded)
		}
		if i == 5 {
			assert.Zero(t, th.RejectionProbability(), "6 requests, 4 accepted: 6 − 8 < 0")
		}
	}
	assert.InDelta(t, 2.0/11, th.RejectionProbability(), 1e-15)
	random = 2.0 / 11 // not below the probability: let through
	p, err := th.Acquire()
	require.NoError(t, err)
	p.Release()
	random = 0.18 // below it: refused
	for range 100 {
		_, err = th.Acquire()
		assert.ErrorIs(t, err, throttle.ErrThrottled)
	}
	var te *throttle.ThrottledError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "throttle: Throttler 'backend' rejected the request on the client side", err.Error())
	assert.True(t, levee.IsRejection(err))
	assert.Equal(t, throttle.Metrics{
		Requests: 10, Accepts: 4, RejectionProbability: 2.0 / 11, Permitted: 11, Throttled: 100,
	}, th.Metrics(), "100 refusals leave the probability where the backend put it")
}

// A backend that accepts nothing: every request is refused with probability n / (n+1), the
// refusals do not raise it, and the counts leave the window after Window.
func TestBackendRejectingEverything(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := newThrottler(t, throttle.Config{Window: 10 * time.Second, WindowBuckets: 10, Random: func() float64 { return 0.5 }})
		fail := func(context.Context) (int, error) { return 0, errOverloaded }
		_, err := throttle.Execute(context.Background(), th, fail)
		assert.Equal(t, errOverloaded, err)
		assert.InDelta(t, 0.5, th.RejectionProbability(), 1e-15, "1 / 2: not yet below 0.5")
		_, err = throttle.Execute(context.Background(), th, fail)
		assert.Equal(t, errOverloaded, err)
		assert.InDelta(t, 2.0/3, th.RejectionProbability(), 1e-15)
		for range 50 {
			_, err = throttle.Execute(context.Background(), th, fail)
			assert.ErrorIs(t, err, throttle.ErrThrottled)
		}
		assert.Equal(t, throttle.Metrics{Requests: 2, Accepts: 0, RejectionProbability: 2.0 / 3, Permitted: 2, Throttled: 50}, th.Metrics())
		time.Sleep(5 * time.Second)
		_, err = throttle.Execute(context.Background(), th, fail)
		assert.ErrorIs(t, err, throttle.ErrThrottled, "still within the window")
		time.Sleep(5 * time.Second)
		assert.Zero(t, th.Metrics().Requests, "the counts left the window")
		ok := func(context.Context) (int, error) { return 1, nil }
		v, err := throttle.Execute(context.Background(), th, ok)
		assert.NoError(t, err)
		assert.Equal(t, 1, v)
		assert.Equal(t, throttle.Metrics{Requests: 1, Accepts: 1, Permitted: 3, Throttled: 51}, th.Metrics())
	})
}

// Only the backend's answers count: a caller's cancellation and an inner levee rejection
// count nothing; with RecordErrors, other errors are accepted requests.
func TestClassification(t *testing.T) {
	th := newThrottler(t, throttle.Config{RecordErrors: []error{errOverloaded}})
	run := func(ctx context.Context, err error) {
		_, _ = throttle.Execute(ctx, th, func(context.Context) (int, error) { return 0, err })
	}
	run(context.Background(), errors.New("404 not found"))
	run(context.Background(), fmt.Errorf("call: %w", errOverloaded))
	run(context.Background(), circuitbreaker.ErrCallNotPermitted)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	run(cancelled, context.Canceled)
	run(context.Background(), nil)
	_, err := throttle.Execute(context.Background(), th, func(context.Context) (int, error) { panic("boom") })
	var pe *levee.PanicError
	assert.ErrorAs(t, err, &pe)
	m := th.Metrics()
	assert.Equal(t, uint64(4), m.Requests, "404, 503, nil and the panic")
	assert.Equal(t, uint64(3), m.Accepts)

	pred := newThrottler(t, throttle.Config{RecordErrorPredicate: func(error) bool { panic("broken") }})
	p, err := pred.Acquire()
	require.NoError(t, err)
	p.OnError(errors.New("x"))
	assert.Equal(t, throttle.Metrics{Requests: 1, RejectionProbability: 0.5, Permitted: 1}, pred.Metrics(), "a panicking predicate records a rejection")
}

// A circuit breaker around the throttler does not record its refusals.
func TestBreakerAroundTheThrottler(t *testing.T) {
	th := newThrottler(t, throttle.Config{Random: func() float64 { return 0 }})
	cb, err := circuitbreaker.New("backend", circuitbreaker.Config{FailureRateThreshold: 90, MinimumNumberOfCalls: 1, SlidingWindowSize: 10})
	require.NoError(t, err)
	p := levee.Compose[int]().With(throttle.Decorator[int](th)).WithCircuitBreaker(cb)
	ok := func(context.Context) (int, error) { return 1, nil }
	fail := func(context.Context) (int, error) { return 0, errOverloaded }
	_, err = p.Execute(context.Background(), ok)
	require.NoError(t, err)
	_, err = p.Execute(context.Background(), fail)
	require.Equal(t, errOverloaded, err)
	_, err = p.Execute(context.Background(), fail)
	require.Equal(t, errOverloaded, err)
	_, err = p.Execute(context.Background(), fail) // 3 requests, 1 accepted: (3 − 2) / 4
	require.ErrorIs(t, err, throttle.ErrThrottled)
	assert.Equal(t, 3, cb.Metrics().NumberOfBufferedCalls, "the refusal is not a call of the breaker")
}

func TestNil(t *testing.T) {
	var th *throttle.Throttler
	_, err := th.Acquire()
	assert.Equal(t, throttle.ErrNilThrottler, err)
	_, err = throttle.Execute(context.Background(), th, func(context.Context) (int, error) { return 0, nil })
	assert.Equal(t, throttle.ErrNilThrottler, err)
	assert.Nil(t, throttle.Decorator[int](th))
	assert.Zero(t, th.Metrics())
	assert.Zero(t, th.RejectionProbability())
	assert.Equal(t, "", th.Name())
	_, err = throttle.Execute[int](context.Background(), newThrottler(t, throttle.Config{}), nil)
	assert.Equal(t, levee.ErrNilCall, err)
	throttle.Permit{}.OnSuccess()
	throttle.Permit{}.OnError(errOverloaded)
}

func TestAllocatesNothing(t *testing.T) {
	th := newThrottler(t, throttle.Config{Random: func() float64 { return 0 }})
	ok := func(context.Context) (int, error) { return 1, nil }
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = throttle.Execute(ctx, th, ok) }))
	th = newThrottler(t, throttle.Config{Random: func() float64 { return 0 }})
	for range 10 {
		p, _ := th.Acquire()
		p.OnError(errOverloaded)
	}
	_, err := th.Acquire()
	require.ErrorIs(t, err, throttle.ErrThrottled)
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = throttle.Execute(ctx, th, ok) }))
}
