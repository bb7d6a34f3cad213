package operators_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/operators"
)

func even(_ context.Context, v int) (bool, error) {
	if v == 5 {
		return false, fmt.Errorf("cannot tell %d", v)
	}
	return v%2 == 0, nil
}

func TestFilterEmitsKeptElementsAndFailedOnes(t *testing.T) {
	f := mustOp(t)(operators.Filter(nil, even, operators.ContinueOnError()))
	got, _ := observe(f(rxgo.Just(ints(6)...)()))
	assert.Equal(t, []string{"2", "4", "E:cannot tell 5", "6"}, got, "a failing predicate never drops an element silently")

	f = mustOp(t)(operators.Filter(nil, even))
	got, _ = observe(f(rxgo.Just(ints(6)...)()))
	assert.Equal(t, []string{"2", "4", "E:cannot tell 5", "6"}, got, "by default, the subscription goes on past an error item")

	f = mustOp(t)(operators.Filter(nil, even, operators.StopOnError()))
	got, _ = observe(f(rxgo.Just(ints(6)...)()))
	assert.Equal(t, []string{"2", "4", "E:stream: stopped at element 4 (5): cannot tell 5"}, got, "StopOnError ends it there")
}

func TestFilterFallbackDecides(t *testing.T) {
	keep, err := fallback.New("keep", fallback.OnAny(fallback.Value(true)))
	assert.NoError(t, err)
	f := mustOp(t)(operators.Filter(levee.Compose[bool]().WithFallback(keep), even))
	got, _ := observe(f(rxgo.Just(ints(6)...)()))
	assert.Equal(t, []string{"2", "4", "5", "6"}, got)

	f = mustOp(t)(operators.Filter(nil, even, operators.WithFallback(func(context.Context, int, error) (bool, error) {
		return false, nil
	})))
	got, _ = observe(f(rxgo.Just(ints(6)...)()))
	assert.Equal(t, []string{"2", "4", "6"}, got)
}

func TestFilterStopOnErrorNamesTheElement(t *testing.T) {
	f := mustOp(t)(operators.Filter(nil, even, operators.StopOnError(), operators.Concurrency(3)))
	got, _ := observe(f(rxgo.Just(ints(9)...)()))
	assert.Equal(t, []string{"2", "4", "E:stream: stopped at element 4 (5): cannot tell 5"}, got)
}

func TestFlatMapEmitsEachValueOfEachCallInOrder(t *testing.T) {
	fn := func(_ context.Context, v int) ([]string, error) {
		switch v {
		case 2:
			return nil, nil
		case 4:
			return nil, fmt.Errorf("no parts for %d", v)
		}
		out := make([]string, v)
		for i := range out {
			out[i] = fmt.Sprintf("%d.%d", v, i)
		}
		return out, nil
	}
	for _, n := range []int{1, 3} {
		f := mustOp(t)(operators.FlatMap(nil, fn, operators.Concurrency(n)))
		got, _ := observe(f(rxgo.Just(1, 2, 3, 4, 5)()))
		assert.Equal(t, []string{"1.0", "3.0", "3.1", "3.2", "E:no parts for 4", "5.0", "5.1", "5.2", "5.3", "5.4"}, got)
		f = mustOp(t)(operators.FlatMap(nil, fn, operators.Concurrency(n), operators.StopOnError()))
		got, _ = observe(f(rxgo.Just(1, 2, 3, 4, 5)()))
		assert.Equal(t, []string{"1.0", "3.0", "3.1", "3.2", "E:stream: stopped at element 3 (4): no parts for 4"}, got)
	}
}

func TestFlatMapFallbackDealsInSlices(t *testing.T) {
	fn := func(context.Context, int) ([]int, error) { return nil, errBoom }
	f := mustOp(t)(operators.FlatMap(nil, fn, operators.WithFallback(func(_ context.Context, in int, _ error) ([]int, error) {
		return []int{-in, -in}, nil
	})))
	got, _ := observe(f(rxgo.Just(1, 2)()))
	assert.Equal(t, []string{"-1", "-1", "-2", "-2"}, got)

	_, err := operators.FlatMap(nil, fn, operators.WithFallback(func(context.Context, int, error) (int, error) { return 0, nil }))
	assert.EqualError(t, err, "operators: FlatMap needs a WithFallback function of type func(context.Context, int, error) ([]int, error), got func(context.Context, int, error) (int, error)")
}
