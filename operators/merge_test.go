package operators_test

import (
	"context"
	"sort"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/operators"
)

// tickSource emits n values gap apart, honouring its context.
func tickSource(n int, gap time.Duration) operators.Source {
	return func(context.Context) (rxgo.Observable, error) {
		return rxgo.Defer([]rxgo.Producer{func(ctx context.Context, next chan<- rxgo.Item) {
			for v := range n {
				select {
				case <-time.After(gap):
				case <-ctx.Done():
					return
				}
				select {
				case next <- rxgo.Of(v):
				case <-ctx.Done():
					return
				}
			}
		}}), nil
	}
}

func TestMergeEmitsEverySource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := mustGuard(t)(operators.Guard(levee.Patterns{}, nil, tickSource(3, time.Second)))
		b := mustGuard(t)(operators.Guard(levee.Patterns{}, nil, tickSource(2, 1500*time.Millisecond)))
		got, err := operators.Collect[int](t.Context(), operators.Merge(a, b))
		require.NoError(t, err)
		sort.Ints(got)
		assert.Equal(t, []int{0, 0, 1, 1, 2}, got)
	})
}

// After a cancellation nothing is left running: synctest.Test fails on a goroutine of the
// bubble still blocked when the test function returns. rxgo.Merge over the same sources
// leaves its goroutines blocked on their sends (run outside the bubble's check, it is not
// asserted here, since a leak cannot be waited for).
func TestMergeLeakFreeAfterCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		var obs []rxgo.Observable
		for range 3 {
			obs = append(obs, mustGuard(t)(operators.Guard(levee.Patterns{}, nil, tickSource(100, time.Millisecond))))
		}
		ch := operators.Merge(obs...).Observe(rxgo.WithContext(ctx))
		<-ch
		cancel()
		for range ch {
		}
		synctest.Wait()
	})
}
