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

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/operators"
)

// TestMapCancelAtEveryStage cancels a subscription at each stage of a per-emission operator
// and checks that its output closes, its upstream is cancelled, and every permit is back
// with nothing recorded as a failure.
func TestMapCancelAtEveryStage(t *testing.T) {
	stages := []struct {
		name  string
		items []any // the upstream's items, after which it waits for its context
		block bool  // the guarded call waits for its context
		read  int   // items the consumer reads before it cancels
	}{
		{name: "before the first item", items: nil},
		{name: "while a call runs", items: ints(3), block: true},
		{name: "while a result waits to be sent", items: ints(3)},
		{name: "after some items, waiting for the upstream", items: ints(2), read: 2},
	}
	for _, st := range stages {
		for _, n := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s, concurrency %d", st.name, n), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					bh := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 3})
					cb := newBreaker(t, circuitbreaker.Config{})
					pl := levee.Compose[int]().WithBulkhead(bh).WithCircuitBreaker(cb)
					var fallbacks atomic.Int32
					m := mustOp(t)(operators.Map(pl, func(ctx context.Context, v int) (int, error) {
						if st.block {
							<-ctx.Done()
							return 0, ctx.Err()
						}
						return v, nil
					}, operators.Concurrency(n), operators.Buffer(0), operators.WithFallback(func(context.Context, int, error) (int, error) {
						fallbacks.Add(1)
						return 0, nil
					})))
					p := newProbe(st.items...)
					p.hang = true
					ctx, cancel := context.WithCancel(context.Background())
					ch := m(p.Observable()).Observe(rxgo.WithContext(ctx))
					for range st.read {
						<-ch
					}
					synctest.Wait()
					cancel()
					for it := range ch {
						t.Errorf("item after the cancellation: %s", show(it))
					}
					synctest.Wait()
					assert.Equal(t, int32(1), p.cancelled.Load(), "the upstream was cancelled")
					assert.Equal(t, 3, bh.Metrics().AvailableConcurrentCalls)
					assert.Equal(t, 0, cb.Metrics().NumberOfFailedCalls)
					assert.Equal(t, int32(0), fallbacks.Load())
				})
			})
		}
	}
}

func TestMapWithFallbackThatPanicsKeepsTheCause(t *testing.T) {
	m := mustOp(t)(operators.Map(nil, failOn(1), operators.WithFallback(func(context.Context, int, error) (int, error) {
		panic("fallback bug")
	}), operators.ContinueOnError()))
	_, items := observe(m(rxgo.Just(1, 2)()))
	require.Len(t, items, 2)
	var fe *fallback.Error
	require.ErrorAs(t, items[0].E, &fe)
	var pe *levee.PanicError
	require.ErrorAs(t, items[0].E, &pe)
	assert.Equal(t, "fallback bug", pe.Value)
	assert.EqualError(t, fe.Cause, "bad 1")
	assert.Equal(t, 4, items[1].V)
}
