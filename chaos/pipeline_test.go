package chaos_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/chaos"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveetest"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/stream"
	"github.com/levee-go/levee/timelimiter"
)

func newBreaker(t *testing.T) *circuitbreaker.CircuitBreaker {
	t.Helper()
	cb, err := circuitbreaker.New("cb", circuitbreaker.Config{SlidingWindowSize: 4, MinimumNumberOfCalls: 4})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, cb.TransitionToDisabledState()) })
	return cb
}

// Innermost, the fault stands for the dependency: the breaker records it and opens.
func TestFaultInsideBreaker(t *testing.T) {
	f := levee.Must(chaos.NewFault("f", chaos.FaultConfig{Config: chaos.Config{InjectionRate: 1}, Fault: errInjected}))
	cb := newBreaker(t)
	p := levee.Compose[int]().With(chaos.Decorator[int](f)).WithCircuitBreaker(cb)
	stub := leveetest.NewStub(leveetest.OK(1))
	for range 4 {
		_, err := p.Execute(context.Background(), stub.Call)
		require.ErrorIs(t, err, errInjected)
	}
	assert.Equal(t, circuitbreaker.Open, cb.State())
	_, err := p.Execute(context.Background(), stub.Call)
	assert.ErrorIs(t, err, circuitbreaker.ErrCallNotPermitted)
	assert.Equal(t, chaos.Metrics{NumberOfInjectedCalls: 4}, f.Metrics())
	assert.Equal(t, int64(0), stub.Invocations())
}

// Outermost, the fault stands for the network in front of the pipeline: the breaker never
// sees the calls it refuses.
func TestFaultOutsideBreaker(t *testing.T) {
	f := levee.Must(chaos.NewFault("f", chaos.FaultConfig{
		Config: chaos.Config{InjectionRate: 0.5, Source: rand.NewPCG(3, 3)},
		Fault:  errInjected,
	}))
	cb := newBreaker(t)
	p := levee.Compose[int]().WithCircuitBreaker(cb).With(chaos.Decorator[int](f))
	stub := leveetest.NewStub(leveetest.OK(1))
	failed := 0
	for range 20 {
		if _, err := p.Execute(context.Background(), stub.Call); err != nil {
			require.ErrorIs(t, err, errInjected)
			failed++
		}
	}
	assert.Equal(t, 9, failed) // measured: PCG(3, 3)
	assert.Equal(t, int64(20-9), stub.Invocations())
	m := cb.Metrics()
	assert.Equal(t, circuitbreaker.Closed, m.State)
	assert.Equal(t, 0, m.NumberOfFailedCalls)
	assert.Equal(t, 4, m.NumberOfBufferedCalls) // a window of 4, all successes
}

func TestOutcomeRetried(t *testing.T) {
	o := levee.Must(chaos.NewOutcome("o", chaos.OutcomeConfig[string]{
		Config:  chaos.Config{InjectionRate: 1},
		Outcome: func(context.Context) (string, error) { return "", errInjected },
	}))
	r := levee.Must(retry.New("r", retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait}))
	p := levee.Compose[string]().With(o.Decorator()).WithRetry(r)
	stub := leveetest.NewStub(leveetest.OK("real"))
	_, err := p.Execute(context.Background(), stub.Call)
	assert.ErrorIs(t, err, errInjected)
	assert.Equal(t, int64(3), o.Metrics().NumberOfInjectedCalls)
	assert.Equal(t, int64(3), r.Metrics().NumberOfTotalCalls)
	assert.Equal(t, int64(0), stub.Invocations())

	o.Disable()
	v, err := p.Execute(context.Background(), stub.Call)
	require.NoError(t, err)
	assert.Equal(t, "real", v)
}

func TestLatencyInsideTimeLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := levee.Must(chaos.NewLatency("l", chaos.LatencyConfig{Config: chaos.Config{InjectionRate: 1}, Latency: 5 * time.Second}))
		tl := levee.Must(timelimiter.New("tl", timelimiter.Config{TimeoutDuration: time.Second}))
		p := levee.Compose[int]().With(chaos.Decorator[int](l)).WithTimeLimiter(tl)
		stub := leveetest.NewStub(leveetest.OK(1))
		start := time.Now()
		_, err := p.Execute(context.Background(), stub.Call)
		assert.ErrorIs(t, err, timelimiter.ErrTimeout)
		assert.Equal(t, time.Second, time.Since(start))
		synctest.Wait()
		// The delay honoured the attempt's cancelled context: nothing is left running.
		assert.Equal(t, int64(0), stub.Invocations())
		assert.True(t, leveetest.VerifyIdle(t, levee.Patterns{TimeLimiter: tl}))
		assert.Equal(t, int64(1), tl.Metrics().NumberOfTimedOutCalls)
	})
}

func TestFaultInStreamMap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := levee.Must(chaos.NewFault("f", chaos.FaultConfig{
			Config: chaos.Config{InjectionRate: 0.3, Source: rand.NewPCG(1, 2)},
			Fault:  errInjected,
		}))
		in := make(chan int)
		go func() {
			defer close(in)
			for i := range 1000 {
				in <- i
			}
		}()
		p := levee.Compose[int]().With(chaos.Decorator[int](f))
		out, err := stream.Map(context.Background(), in, p, func(_ context.Context, v int) (int, error) { return 2 * v, nil })
		require.NoError(t, err)
		failed, sum := 0, 0
		for r := range out {
			if r.Err != nil {
				require.ErrorIs(t, r.Err, errInjected)
				failed++
				continue
			}
			assert.Equal(t, 2*r.In, r.Value)
			sum++
		}
		assert.Equal(t, 296, failed) // one draw per element, in input order (Concurrency 1): the same draws as TestFaultSeededRate
		assert.Equal(t, 704, sum)
	})
}

func TestAllocsWhileDisabled(t *testing.T) {
	f := levee.Must(chaos.NewFault("f", chaos.FaultConfig{Config: chaos.Config{Disabled: true}, Fault: errInjected}))
	l := levee.Must(chaos.NewLatency("l", chaos.LatencyConfig{Config: chaos.Config{Disabled: true}}))
	o := levee.Must(chaos.NewOutcome("o", chaos.OutcomeConfig[int]{
		Config:  chaos.Config{Disabled: true},
		Outcome: func(context.Context) (int, error) { return 0, errInjected },
	}))
	call := leveetest.NewStub(leveetest.OK(1)).Call
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = chaos.Execute(ctx, f, call) }))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = chaos.Execute(ctx, l, call) }))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = o.Execute(ctx, call) }))

	// Switched on, a call that is not picked allocates nothing either, seeded or not.
	seeded := levee.Must(chaos.NewFault("f", chaos.FaultConfig{Config: chaos.Config{InjectionRate: 0.001, Source: rand.NewPCG(1, 2)}, Fault: errInjected}))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = chaos.Execute(ctx, seeded, call) }))
}
