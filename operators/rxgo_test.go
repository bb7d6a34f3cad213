package operators_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/operators"
)

// rxgo operators downstream pass the context given to Observe up to ours, so cancelling it
// ends the whole chain: rxgo's Take alone would leave its upstream blocked.
func TestRxgoTakeDownstreamEndsTheChainOnCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newProbe(ints(100)...)
		m := mustOp(t)(operators.Map(nil, double, operators.Concurrency(2)))
		ctx, cancel := context.WithCancel(context.Background())
		got, _ := observeCtx(ctx, m(p.Observable()).Take(2).Map(func(_ context.Context, v any) (any, error) {
			return v.(int) + 1, nil
		}))
		assert.Equal(t, []string{"3", "5"}, got)
		cancel()
		synctest.Wait()
		assert.Equal(t, int32(1), p.cancelled.Load())
	})
}

// rxgo's Retry resubscribes by observing its upstream again, which our operators allow when
// their own upstream is cold.
func TestRxgoRetryDownstreamResubscribesOurOperator(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		p := newProbe(1, errBoom)
		m := mustOp(t)(operators.Map(nil, double))
		got, _ := observeCtx(ctx, m(p.Observable()).Retry(2, func(error) bool { return true }, rxgo.WithContext(ctx)))
		assert.Equal(t, []string{"2", "2", "2", "E:boom"}, got)
		assert.Equal(t, int32(3), p.subs.Load())
		cancel()
		synctest.Wait()
	})
}
