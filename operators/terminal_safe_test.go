package operators_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/operators"
)

// tenTimes multiplies by 10, fails on 3, and counts its calls.
func tenTimes(calls *atomic.Int32) func(context.Context, int) (int, error) {
	return func(_ context.Context, v int) (int, error) {
		calls.Add(1)
		if v == 3 {
			return 0, errBoom
		}
		return 10 * v, nil
	}
}

func zeroToNine() []any {
	items := make([]any, 10)
	for i := range items {
		items[i] = i
	}
	return items
}

// rxgo's ToSlice, levee's Collect and the failed element agree: Map with StopOnError ends at
// its first error item, so the values before it and its error are the whole stream; no call is made past it,
// and nothing is left running, even for a ToSlice observing without a context (the synctest
// bubble would report a goroutine blocked for ever).
func TestMapEndsWhereRxgoToSliceAndCollectStop(t *testing.T) {
	for _, concurrency := range []int{1, 4} {
		t.Run(fmt.Sprintf("concurrency %d", concurrency), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int32
				m := mustOp(t)(operators.Map(nil, tenTimes(&calls), operators.Concurrency(concurrency), operators.StopOnError()))

				got, err := m(rxgo.Just(zeroToNine()...)()).ToSlice(0)
				assert.Equal(t, []any{0, 10, 20}, got)
				assert.EqualError(t, err, "stream: stopped at element 3 (3): boom")
				assert.ErrorIs(t, err, errBoom)
				synctest.Wait()
				if concurrency == 1 {
					assert.Equal(t, int32(4), calls.Load(), "no call past the failed element")
				}

				values, err := operators.Collect[int](t.Context(), m(rxgo.Just(zeroToNine()...)()))
				assert.Equal(t, []int{0, 10, 20}, values)
				assert.EqualError(t, err, "stream: stopped at element 3 (3): boom")
			})
		})
	}
}

// The ways to see every element through rxgo's ToSlice and levee's Collect: MapResults (a
// failed element is a value) and a fallback (it answers the failed element).
func TestEveryElementReachesToSliceAndCollect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		mr := mustOp(t)(operators.MapResults(nil, tenTimes(&calls), operators.Concurrency(4)))
		got, err := mr(rxgo.Just(zeroToNine()...)()).ToSlice(0)
		require.NoError(t, err)
		shown := []string{}
		for _, x := range got {
			r := x.(operators.Result[int, int])
			if r.Err != nil {
				shown = append(shown, fmt.Sprintf("%d:%v", r.Index, r.Err))
				continue
			}
			shown = append(shown, fmt.Sprintf("%d:%d", r.Index, r.Value))
		}
		assert.Equal(t, []string{"0:0", "1:10", "2:20", "3:boom", "4:40", "5:50", "6:60", "7:70", "8:80", "9:90"}, shown)

		fb := mustOp(t)(operators.Map(nil, tenTimes(&calls), operators.WithFallback(func(context.Context, int, error) (int, error) {
			return -1, nil
		})))
		values, err := operators.Collect[int](t.Context(), fb(rxgo.Just(zeroToNine()...)()))
		require.NoError(t, err)
		assert.Equal(t, []int{0, 10, 20, -1, 40, 50, 60, 70, 80, 90}, values)
	})
}

// ContinueOnError keeps the subscription going after a failed element, for a consumer that
// reads every item: a range over Observe sees all ten.
func TestMapContinueOnErrorForAConsumerThatReadsEverything(t *testing.T) {
	var calls atomic.Int32
	m := mustOp(t)(operators.Map(nil, tenTimes(&calls), operators.ContinueOnError()))
	got, _ := observe(m(rxgo.Just(zeroToNine()...)()))
	assert.Equal(t, []string{"0", "10", "20", "E:boom", "40", "50", "60", "70", "80", "90"}, got)
	assert.Equal(t, int32(10), calls.Load())

	_, err := operators.Map(nil, double, operators.ContinueOnError(), operators.StopOnError())
	assert.EqualError(t, err, "operators: set StopOnError or ContinueOnError, not both")
}
