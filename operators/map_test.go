package operators_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/operators"
)

func TestMapEmitsEachValueInOrder(t *testing.T) {
	m := mustOp(t)(operators.Map(nil, double))
	got, _ := observe(m(rxgo.Just(1, 2, 3, 4, 5)()))
	assert.Equal(t, []string{"2", "4", "6", "8", "10"}, got)
}

func TestMapContinueOnErrorMakesAFailedElementOneErrorItemAmongValues(t *testing.T) {
	m := mustOp(t)(operators.Map(nil, failOn(3), operators.ContinueOnError()))
	got, _ := observe(m(rxgo.Just(1, 2, 3, 4, 5)()))
	assert.Equal(t, []string{"2", "4", "E:bad 3", "8", "10"}, got)
}

// As stream.Map, Map goes on past a failed element by default; StopOnError ends it there.
func TestMapGoesOnPastAFailureByDefault(t *testing.T) {
	for _, opts := range [][]operators.Option{nil, {operators.ContinueOnError()}} {
		m := mustOp(t)(operators.Map(nil, failOn(3), opts...))
		got, items := observe(m(rxgo.Just(1, 2, 3, 4, 5)()))
		assert.Equal(t, []string{"2", "4", "E:bad 3", "8", "10"}, got)
		assert.NotErrorIs(t, items[2].E, operators.ErrStopped)
	}
}

func TestMapStopOnErrorEndsAtTheFirstFailureAndCancelsTheUpstream(t *testing.T) {
	for _, opts := range [][]operators.Option{{operators.StopOnError()}, {operators.StopOnError(), operators.Concurrency(2)}} {
		synctest.Test(t, func(t *testing.T) {
			p := newProbe(ints(5)...)
			p.hang = true
			m := mustOp(t)(operators.Map(nil, failOn(3), opts...))
			got, items := observe(m(p.Observable()))
			assert.Equal(t, []string{"2", "4", "E:stream: stopped at element 2 (3): bad 3"}, got)
			err := items[2].E
			assert.ErrorIs(t, err, operators.ErrStopped)
			var stopped *operators.StoppedError[int]
			require.ErrorAs(t, err, &stopped)
			assert.Equal(t, 2, stopped.Index)
			assert.Equal(t, 3, stopped.In)
			synctest.Wait()
			assert.Equal(t, int32(1), p.cancelled.Load(), "the upstream was cancelled")
		})
	}
}

func TestMapForwardsUpstreamErrorsWithoutCallingThePipeline(t *testing.T) {
	cb := newBreaker(t, circuitbreaker.Config{})
	p := levee.Compose[int]().WithCircuitBreaker(cb)
	var calls atomic.Int32
	m := mustOp(t)(operators.Map(p, func(_ context.Context, v int) (int, error) {
		calls.Add(1)
		return 2 * v, nil
	}, operators.ContinueOnError()))
	got, items := observe(m(newProbe(1, errBoom, 3).Observable()))
	assert.Equal(t, []string{"2", "E:boom", "6"}, got)
	assert.Same(t, errBoom, items[1].E, "forwarded unchanged")
	assert.Equal(t, int32(2), calls.Load())
	mt := cb.Metrics()
	assert.Equal(t, 2, mt.NumberOfSuccessfulCalls)
	assert.Equal(t, 0, mt.NumberOfFailedCalls)
}

func TestMapStopsAtAnUpstreamError(t *testing.T) {
	m := mustOp(t)(operators.Map(nil, double, operators.StopOnError()))
	got, items := observe(m(newProbe(1, errBoom, 3).Observable()))
	assert.Equal(t, []string{"2", "E:boom"}, got)
	assert.Same(t, errBoom, items[1].E)

	m = mustOp(t)(operators.Map(nil, double))
	got, items = observe(m(newProbe(1, errBoom, 3).Observable()))
	assert.Equal(t, []string{"2", "E:boom", "6"}, got, "by default it is forwarded and the subscription goes on")
	assert.Same(t, errBoom, items[1].E)
}

func TestMapPanicInTheGuardedFunctionBecomesAnErrorItem(t *testing.T) {
	cb := newBreaker(t, circuitbreaker.Config{})
	m := mustOp(t)(operators.Map(levee.Compose[int]().WithCircuitBreaker(cb), func(_ context.Context, v int) (int, error) {
		if v == 2 {
			panic("user bug")
		}
		return v, nil
	}, operators.ContinueOnError()))
	got, items := observe(m(rxgo.Just(1, 2, 3)()))
	assert.Equal(t, []string{"1", "E:levee: panic: user bug", "3"}, got)
	var pe *levee.PanicError
	require.ErrorAs(t, items[1].E, &pe)
	assert.Equal(t, "user bug", pe.Value)
	assert.Equal(t, 1, cb.Metrics().NumberOfFailedCalls, "the panic is a failure of the call")
}

func TestMapItemOfAnotherTypeIsAFailedElement(t *testing.T) {
	var calls atomic.Int32
	m := mustOp(t)(operators.MapResults(nil, func(_ context.Context, v int) (int, error) {
		calls.Add(1)
		return v, nil
	}))
	_, items := observe(m(rxgo.Just(1, "x", 3)()))
	require.Len(t, items, 3)
	r := items[1].V.(operators.Result[int, int])
	var te *operators.ItemTypeError
	require.ErrorAs(t, r.Err, &te)
	assert.Equal(t, 1, te.Index)
	assert.Equal(t, "x", te.Value)
	assert.Equal(t, reflect.TypeFor[int](), te.Want)
	assert.Equal(t, "operators: item 1 is string, not int", te.Error())
	assert.Equal(t, 3, items[2].V.(operators.Result[int, int]).Value)
	assert.Equal(t, int32(2), calls.Load())
}

func TestMapNilItemIsTheZeroValueOfAnInterfaceType(t *testing.T) {
	m := mustOp(t)(operators.Map(nil, func(_ context.Context, v fmt.Stringer) (bool, error) { return v == nil, nil }))
	got, _ := observe(m(newProbe(nil).Observable()))
	assert.Equal(t, []string{"true"}, got)

	n := mustOp(t)(operators.Map(nil, double, operators.ContinueOnError()))
	got, _ = observe(n(newProbe(nil).Observable()))
	assert.Equal(t, []string{"E:operators: item 0 is <nil>, not int"}, got)
}

func TestMapResultsCarryElementIndexAndFallbackMarks(t *testing.T) {
	fb, err := fallback.New("cache", fallback.OnError(errBoom, fallback.Value(-1)))
	require.NoError(t, err)
	p := levee.Compose[int]().WithFallback(fb)
	fn := func(_ context.Context, v int) (int, error) {
		switch v {
		case 2:
			return 0, errBoom
		case 3:
			return 0, errors.New("other")
		}
		return 10 * v, nil
	}
	m := mustOp(t)(operators.MapResults(p, fn, operators.WithFallback(func(_ context.Context, in int, err error) (int, error) {
		return 100 * in, nil
	})))
	_, items := observe(m(rxgo.Just(1, 2, 3)()))
	require.Len(t, items, 3)
	var rs []operators.Result[int, int]
	for _, it := range items {
		require.NoError(t, it.E)
		rs = append(rs, it.V.(operators.Result[int, int]))
	}
	assert.Equal(t, operators.Result[int, int]{Index: 0, In: 1, Value: 10}, rs[0])
	assert.Equal(t, operators.Result[int, int]{Index: 1, In: 2, Value: -1, Fallback: true, Cause: errBoom}, rs[1], "the pipeline's fallback")
	assert.Equal(t, 2, rs[2].Index)
	assert.Equal(t, 300, rs[2].Value, "WithFallback answers what the pipeline gave up on")
	assert.True(t, rs[2].Fallback)
	assert.EqualError(t, rs[2].Cause, "other")
}

func TestMapWithFallbackThatFailsKeepsBothErrors(t *testing.T) {
	errFb := errors.New("no cache")
	m := mustOp(t)(operators.Map(nil, failOn(1), operators.WithFallback(func(context.Context, int, error) (int, error) {
		return 0, errFb
	})))
	_, items := observe(m(rxgo.Just(1)()))
	require.Len(t, items, 1)
	var fe *fallback.Error
	require.ErrorAs(t, items[0].E, &fe)
	assert.ErrorIs(t, items[0].E, errFb)
	assert.EqualError(t, fe.Cause, "bad 1")
}

func TestMapCanBeObservedAgain(t *testing.T) {
	p := newProbe(1, 2, 3)
	m := mustOp(t)(operators.Map(nil, double, operators.Concurrency(2)))
	obs := m(p.Observable())
	first, _ := observe(obs)
	second, _ := observe(obs)
	assert.Equal(t, []string{"2", "4", "6"}, first)
	assert.Equal(t, first, second)
	assert.Equal(t, int32(2), p.subs.Load())
}

func TestMapEarlyStopCancelsEveryStage(t *testing.T) {
	for _, n := range []int{1, 4} {
		t.Run(fmt.Sprint("concurrency ", n), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				bh := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 8})
				cb := newBreaker(t, circuitbreaker.Config{})
				pl := levee.Compose[int]().WithBulkhead(bh).WithCircuitBreaker(cb)
				p := newProbe(ints(100)...)
				m := mustOp(t)(operators.Map(pl, double, operators.Concurrency(n)))
				got := take(m(p.Observable()), 2)
				assert.Equal(t, []string{"2", "4"}, got)
				synctest.Wait()
				assert.Equal(t, int32(1), p.cancelled.Load(), "the upstream was cancelled")
				assert.Equal(t, 8, bh.Metrics().AvailableConcurrentCalls)
				assert.Equal(t, 0, cb.Metrics().NumberOfFailedCalls)
			})
		})
	}
}

func TestMapCancelWhileACallRunsReleasesItUnrecorded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bh := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 2})
		cb := newBreaker(t, circuitbreaker.Config{})
		pl := levee.Compose[int]().WithBulkhead(bh).WithCircuitBreaker(cb)
		started := make(chan struct{})
		var fallbacks atomic.Int32
		m := mustOp(t)(operators.Map(pl, func(ctx context.Context, v int) (int, error) {
			close(started)
			<-ctx.Done()
			return 0, ctx.Err()
		}, operators.Buffer(1), operators.WithFallback(func(context.Context, int, error) (int, error) {
			fallbacks.Add(1)
			return -1, nil
		})))
		ctx, cancel := context.WithCancel(context.Background())
		ch := m(rxgo.Just(1, 2)()).Observe(rxgo.WithContext(ctx))
		<-started
		assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)
		cancel()
		var got []string
		for it := range ch {
			got = append(got, show(it))
		}
		assert.Empty(t, got, "a call ended by the cancellation yields nothing")
		assert.Equal(t, int32(0), fallbacks.Load(), "nobody waits for a fallback's answer")
		assert.Equal(t, 2, bh.Metrics().AvailableConcurrentCalls)
		assert.Equal(t, 0, cb.Metrics().NumberOfBufferedCalls)
	})
}

func TestMapInvalidOptionsAreRefused(t *testing.T) {
	tests := []struct {
		name string
		opt  operators.Option
		want string
	}{
		{"Concurrency 0", operators.Concurrency(0), "operators: Concurrency must be in [1, 65536], got 0"},
		{"Concurrency negative", operators.Concurrency(-2), "operators: Concurrency must be in [1, 65536], got -2"},
		{"Concurrency too large", operators.Concurrency(operators.MaxConcurrency + 1), "operators: Concurrency must be in [1, 65536], got 65537"},
		{"Buffer negative", operators.Buffer(-1), "operators: Buffer must be in [0, 1048576], got -1"},
		{"Buffer too large", operators.Buffer(1 << 40), "operators: Buffer must be in [0, 1048576], got 1099511627776"},
		{"zero Option", operators.Option{}, "operators: option 0 of Map is the zero Option"},
		{"TimeLimit", operators.TimeLimit(operators.BoundGap), "operators: option TimeLimit does not apply to Map"},
		{"nil WithFallback", operators.WithFallback[int, int](nil), "operators: WithFallback needs a function, got nil"},
		{"WithFallback of another type", operators.WithFallback(func(context.Context, string, error) (int, error) { return 0, nil }),
			"operators: Map needs a WithFallback function of type func(context.Context, int, error) (int, error), got func(context.Context, string, error) (int, error)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op, err := operators.Map(nil, double, tt.opt)
			assert.Nil(t, op)
			assert.EqualError(t, err, tt.want)
		})
	}
}

func TestMapRefusesOptionsThatContradictEachOther(t *testing.T) {
	tests := []struct {
		name string
		opts []operators.Option
		want string
	}{
		{"Window 0", []operators.Option{operators.Window(0)}, "operators: Window must be in [1, 65536], got 0"},
		{"Window too large", []operators.Option{operators.Window(operators.MaxWindow + 1)}, "operators: Window must be in [1, 65536], got 65537"},
		{"Window below Concurrency", []operators.Option{operators.Window(4), operators.Concurrency(8)},
			"operators: Window must be in [8, 65536] (at least Concurrency), got 4"},
		{"Window below Concurrency, Unordered", []operators.Option{operators.Unordered(), operators.Concurrency(8), operators.Window(4)},
			"operators: Window must be in [8, 65536] (at least Concurrency), got 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op, err := operators.Map(nil, double, tt.opts...)
			assert.Nil(t, op)
			assert.EqualError(t, err, tt.want)
		})
	}
}

func TestPerEmissionOperatorsRefuseANilFunction(t *testing.T) {
	_, err := operators.Map[int, int](nil, nil)
	assert.ErrorIs(t, err, levee.ErrNilCall)
	_, err = operators.MapResults[int, int](nil, nil)
	assert.ErrorIs(t, err, levee.ErrNilCall)
	_, err = operators.Filter[int](nil, nil)
	assert.ErrorIs(t, err, levee.ErrNilCall)
	_, err = operators.FlatMap[int, int](nil, nil)
	assert.ErrorIs(t, err, levee.ErrNilCall)
}

func TestOperatorOnANilObservableFailsEachSubscription(t *testing.T) {
	m := mustOp(t)(operators.Map(nil, double))
	_, items := observe(m(nil))
	require.Len(t, items, 1)
	assert.ErrorIs(t, items[0].E, operators.ErrNilObservable)
}
