package chaos_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/chaos"
	"github.com/levee-go/levee/leveetest"
)

var (
	errInjected = errors.New("injected fault")
	errDown     = errors.New("dependency down")
)

func TestValidation(t *testing.T) {
	fault := func(rate float64) error {
		_, err := chaos.NewFault("f", chaos.FaultConfig{Config: chaos.Config{InjectionRate: rate}, Fault: errInjected})
		return err
	}
	assert.EqualError(t, fault(1.5), "chaos: InjectionRate must be in [0, 1], got 1.5")
	assert.EqualError(t, fault(-0.1), "chaos: InjectionRate must be in [0, 1], got -0.1")
	assert.EqualError(t, fault(math.NaN()), "chaos: InjectionRate must be in [0, 1], got NaN")
	assert.NoError(t, fault(0))
	assert.NoError(t, fault(1))

	_, err := chaos.NewFault("f", chaos.FaultConfig{})
	assert.EqualError(t, err, "chaos: Fault must be a non-nil error or FaultGenerator a non-nil function, got neither")
	_, err = chaos.NewFault("f", chaos.FaultConfig{Fault: errInjected, FaultGenerator: func(context.Context) error { return nil }})
	assert.EqualError(t, err, "chaos: set Fault or FaultGenerator, not both")

	_, err = chaos.NewLatency("l", chaos.LatencyConfig{Latency: -time.Second})
	assert.EqualError(t, err, "chaos: Latency must be >= 0, got -1s")
	_, err = chaos.NewLatency("l", chaos.LatencyConfig{Latency: time.Second, LatencyGenerator: func(context.Context) time.Duration { return 0 }})
	assert.EqualError(t, err, "chaos: set Latency or LatencyGenerator, not both")
	_, err = chaos.NewLatency("l", chaos.LatencyConfig{Config: chaos.Config{InjectionRate: 2}})
	assert.EqualError(t, err, "chaos: InjectionRate must be in [0, 1], got 2")

	_, err = chaos.NewBehaviour("b", chaos.BehaviourConfig{})
	assert.EqualError(t, err, "chaos: Behaviour must be a non-nil function, got nil")
	_, err = chaos.NewOutcome("o", chaos.OutcomeConfig[int]{})
	assert.EqualError(t, err, "chaos: Outcome must be a non-nil function, got nil")
	_, err = chaos.NewOutcome("o", chaos.OutcomeConfig[int]{Config: chaos.Config{InjectionRate: 1.01}})
	assert.EqualError(t, err, "chaos: InjectionRate must be in [0, 1], got 1.01")
}

// run makes n calls to a stub dependency through s and returns how many failed with
// errInjected and how many reached the stub.
func run(t *testing.T, s chaos.Strategy, n int) (injected int, reached int64) {
	t.Helper()
	stub := leveetest.NewStub(leveetest.OK(1))
	for range n {
		v, err := chaos.Execute(context.Background(), s, stub.Call)
		if err != nil {
			require.ErrorIs(t, err, errInjected)
			injected++
		} else {
			require.Equal(t, 1, v)
		}
	}
	return injected, stub.Invocations()
}

func TestFaultSeededRate(t *testing.T) {
	newFault := func() *chaos.Fault {
		return levee.Must(chaos.NewFault("f", chaos.FaultConfig{
			Config: chaos.Config{InjectionRate: 0.3, Source: rand.NewPCG(1, 2)},
			Fault:  errInjected,
		}))
	}
	f := newFault()
	events := leveetest.Record(t, f.Subscribe)
	injected, reached := run(t, f, 1000)
	assert.Equal(t, 296, injected) // measured: PCG(1, 2), 1,000 draws below 0.3
	assert.Equal(t, int64(1000-296), reached)
	assert.Equal(t, chaos.Metrics{NumberOfInjectedCalls: 296, NumberOfPassedCalls: 704}, f.Metrics())
	assert.Equal(t, 296, events.Len())
	e := events.Events()[0]
	assert.Equal(t, "f", e.Name)
	assert.Equal(t, chaos.EventFaultInjected, e.Type)
	assert.Same(t, errInjected, e.Err)

	// The same source gives the same calls.
	again, _ := run(t, newFault(), 1000)
	assert.Equal(t, injected, again)
}

func TestDefaultRateAndAlways(t *testing.T) {
	f := levee.Must(chaos.NewFault("f", chaos.FaultConfig{Config: chaos.Config{Source: rand.NewPCG(1, 2)}, Fault: errInjected}))
	injected, _ := run(t, f, 10000)
	assert.Equal(t, 12, injected) // measured: the default rate, 0.001, over 10,000 draws

	always := levee.Must(chaos.NewFault("f", chaos.FaultConfig{Config: chaos.Config{InjectionRate: 1}, Fault: errInjected}))
	injected, reached := run(t, always, 100)
	assert.Equal(t, 100, injected)
	assert.Equal(t, int64(0), reached)
}

func TestSwitch(t *testing.T) {
	f := levee.Must(chaos.NewFault("f", chaos.FaultConfig{Config: chaos.Config{InjectionRate: 1, Disabled: true}, Fault: errInjected}))
	assert.False(t, f.Enabled())
	injected, reached := run(t, f, 10)
	assert.Equal(t, 0, injected)
	assert.Equal(t, int64(10), reached)
	assert.Equal(t, chaos.Metrics{}, f.Metrics())

	f.Enable()
	assert.True(t, f.Enabled())
	injected, _ = run(t, f, 10)
	assert.Equal(t, 10, injected)

	f.Disable()
	injected, _ = run(t, f, 10)
	assert.Equal(t, 0, injected)
	assert.Equal(t, chaos.Metrics{NumberOfInjectedCalls: 10}, f.Metrics())
}

type chaosKey struct{}

func TestEnabledFunc(t *testing.T) {
	f := levee.Must(chaos.NewFault("f", chaos.FaultConfig{
		Config: chaos.Config{InjectionRate: 1, EnabledFunc: func(ctx context.Context) bool { return ctx.Value(chaosKey{}) != nil }},
		Fault:  errInjected,
	}))
	stub := leveetest.NewStub(leveetest.OK(1))
	_, err := chaos.Execute(context.Background(), f, stub.Call)
	require.NoError(t, err)
	_, err = chaos.Execute(context.WithValue(context.Background(), chaosKey{}, true), f, stub.Call)
	require.ErrorIs(t, err, errInjected)
	assert.Equal(t, chaos.Metrics{NumberOfInjectedCalls: 1, NumberOfPassedCalls: 1}, f.Metrics())

	panicky := levee.Must(chaos.NewFault("f", chaos.FaultConfig{
		Config: chaos.Config{EnabledFunc: func(context.Context) bool { panic("broken switch") }},
		Fault:  errInjected,
	}))
	_, err = chaos.Execute(context.Background(), panicky, stub.Call)
	var pe *levee.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "broken switch", pe.Value)
	assert.Equal(t, int64(1), stub.Invocations())
}

func TestFaultGenerator(t *testing.T) {
	n := 0
	f := levee.Must(chaos.NewFault("f", chaos.FaultConfig{
		Config: chaos.Config{InjectionRate: 1},
		FaultGenerator: func(context.Context) error {
			n++
			if n%2 == 0 {
				return nil
			}
			return errInjected
		},
	}))
	injected, reached := run(t, f, 10)
	assert.Equal(t, 5, injected)
	assert.Equal(t, int64(5), reached)
	assert.Equal(t, chaos.Metrics{NumberOfInjectedCalls: 5, NumberOfPassedCalls: 5}, f.Metrics())
}

func TestNils(t *testing.T) {
	stub := leveetest.NewStub(leveetest.OK(1))
	_, err := chaos.Execute[int](context.Background(), nil, stub.Call)
	assert.Same(t, chaos.ErrNilStrategy, err)
	var nilFault *chaos.Fault
	_, err = chaos.Execute(context.Background(), nilFault, stub.Call)
	assert.Same(t, chaos.ErrNilStrategy, err)
	assert.Nil(t, chaos.Decorator[int](nilFault))
	assert.Nil(t, chaos.Decorator[int](nil))

	f := levee.Must(chaos.NewFault("f", chaos.FaultConfig{Fault: errInjected}))
	_, err = chaos.Execute[int](context.Background(), f, nil)
	assert.Same(t, levee.ErrNilCall, err)
	v, err := chaos.Execute(nil, f, stub.Call) //nolint:staticcheck // a nil ctx is accepted
	require.NoError(t, err)
	assert.Equal(t, 1, v)

	var nilOutcome *chaos.Outcome[int]
	_, err = nilOutcome.Execute(context.Background(), stub.Call)
	assert.Same(t, chaos.ErrNilStrategy, err)
	assert.Nil(t, nilOutcome.Decorator())
	o := levee.Must(chaos.NewOutcome("o", chaos.OutcomeConfig[int]{Outcome: func(context.Context) (int, error) { return 0, nil }}))
	_, err = o.Execute(context.Background(), nil)
	assert.Same(t, levee.ErrNilCall, err)
	assert.Equal(t, int64(1), stub.Invocations())
}

func TestEventTypeString(t *testing.T) {
	assert.Equal(t, "FAULT_INJECTED", chaos.EventFaultInjected.String())
	assert.Equal(t, "LATENCY_INJECTED", chaos.EventLatencyInjected.String())
	assert.Equal(t, "OUTCOME_INJECTED", chaos.EventOutcomeInjected.String())
	assert.Equal(t, "BEHAVIOUR_INJECTED", chaos.EventBehaviourInjected.String())
	assert.Equal(t, "EventType(9)", chaos.EventType(9).String())
}

func TestLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := levee.Must(chaos.NewLatency("l", chaos.LatencyConfig{Config: chaos.Config{InjectionRate: 1}, Latency: 2 * time.Second}))
		events := leveetest.Record(t, l.Subscribe)
		stub := leveetest.NewStub(leveetest.OK("v"))
		start := time.Now()
		v, err := chaos.Execute(context.Background(), l, stub.Call)
		require.NoError(t, err)
		assert.Equal(t, "v", v)
		assert.Equal(t, 2*time.Second, time.Since(start))
		require.Equal(t, 1, events.Len())
		assert.Equal(t, chaos.EventLatencyInjected, events.Events()[0].Type)
		assert.Equal(t, 2*time.Second, events.Events()[0].Latency)

		// The caller's deadline ends the delay; the call never runs.
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		start = time.Now()
		_, err = chaos.Execute(ctx, l, stub.Call)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 500*time.Millisecond, time.Since(start))
		assert.Equal(t, int64(1), stub.Invocations())
	})
}

func TestLatencyDefaultAndGenerator(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		def := levee.Must(chaos.NewLatency("l", chaos.LatencyConfig{Config: chaos.Config{InjectionRate: 1}}))
		stub := leveetest.NewStub(leveetest.OK(1))
		start := time.Now()
		_, err := chaos.Execute(context.Background(), def, stub.Call)
		require.NoError(t, err)
		assert.Equal(t, chaos.DefaultLatency, time.Since(start))
		assert.Equal(t, 30*time.Second, chaos.DefaultLatency)

		var n time.Duration
		gen := levee.Must(chaos.NewLatency("l", chaos.LatencyConfig{
			Config: chaos.Config{InjectionRate: 1},
			LatencyGenerator: func(context.Context) time.Duration {
				n++
				return (n - 2) * time.Second // -1s, 0, 1s, 2s
			},
		}))
		start = time.Now()
		for range 4 {
			_, err := chaos.Execute(context.Background(), gen, stub.Call)
			require.NoError(t, err)
		}
		assert.Equal(t, 3*time.Second, time.Since(start))
		assert.Equal(t, chaos.Metrics{NumberOfInjectedCalls: 2, NumberOfPassedCalls: 2}, gen.Metrics())
		assert.Equal(t, int64(5), stub.Invocations())
	})
}

func TestLatencySeededRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := levee.Must(chaos.NewLatency("l", chaos.LatencyConfig{
			Config:  chaos.Config{InjectionRate: 0.3, Source: rand.NewPCG(1, 2)},
			Latency: time.Second,
		}))
		stub := leveetest.NewStub(leveetest.OK(1))
		start := time.Now()
		for range 1000 {
			_, err := chaos.Execute(context.Background(), l, stub.Call)
			require.NoError(t, err)
		}
		assert.Equal(t, 296*time.Second, time.Since(start)) // the same draws as the fault's
		assert.Equal(t, int64(1000), stub.Invocations())
	})
}

func TestOutcome(t *testing.T) {
	o := levee.Must(chaos.NewOutcome("o", chaos.OutcomeConfig[string]{
		Config:  chaos.Config{InjectionRate: 0.5, Source: rand.NewPCG(7, 7)},
		Outcome: func(context.Context) (string, error) { return "stale", errInjected },
	}))
	events := leveetest.Record(t, o.Subscribe)
	stub := leveetest.NewStub(leveetest.OK("fresh"))
	got := map[string]int{}
	for range 100 {
		v, err := o.Execute(context.Background(), stub.Call)
		if err != nil {
			require.ErrorIs(t, err, errInjected)
		}
		got[v]++
	}
	assert.Equal(t, map[string]int{"stale": 58, "fresh": 42}, got) // measured: PCG(7, 7)
	assert.Equal(t, int64(42), stub.Invocations())
	assert.Equal(t, 58, events.Len())
	assert.Equal(t, chaos.EventOutcomeInjected, events.Events()[0].Type)
	assert.Same(t, errInjected, events.Events()[0].Err)
}

func TestBehaviour(t *testing.T) {
	ran := 0
	b := levee.Must(chaos.NewBehaviour("b", chaos.BehaviourConfig{
		Config: chaos.Config{InjectionRate: 1},
		Behaviour: func(context.Context) error {
			ran++
			if ran == 2 {
				return errInjected
			}
			if ran == 3 {
				panic("behaviour broke")
			}
			return nil
		},
	}))
	events := leveetest.Record(t, b.Subscribe)
	stub := leveetest.NewStub(leveetest.OK(1))
	v, err := chaos.Execute(context.Background(), b, stub.Call)
	require.NoError(t, err)
	assert.Equal(t, 1, v)
	_, err = chaos.Execute(context.Background(), b, stub.Call)
	assert.Same(t, errInjected, err)
	_, err = chaos.Execute(context.Background(), b, stub.Call)
	var pe *levee.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "behaviour broke", pe.Value)
	assert.Equal(t, 3, ran)
	assert.Equal(t, int64(1), stub.Invocations())
	assert.Equal(t, 3, events.Len())
	assert.Equal(t, chaos.EventBehaviourInjected, events.Events()[2].Type)
}

func TestCallPanicGuarded(t *testing.T) {
	f := levee.Must(chaos.NewFault("f", chaos.FaultConfig{Fault: errInjected, Config: chaos.Config{Disabled: true}}))
	stub := leveetest.NewStub(leveetest.Panic[int]("boom"))
	_, err := chaos.Execute(context.Background(), f, stub.Call)
	var pe *levee.PanicError
	require.ErrorAs(t, err, &pe)
	f.Enable()
	_, err = chaos.Execute(context.Background(), f, stub.Call)
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "boom", pe.Value)
	assert.Equal(t, int64(2), stub.Panics())
}
