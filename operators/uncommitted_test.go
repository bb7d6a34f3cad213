package operators_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/operators"
)

// As stream's: under OrderByKey, element 0's key waits 10s while the others go out above the
// watermark; MaxUncommitted(8) keeps at most 8 elements taken and not below it.
func TestMaxUncommittedBoundsRedelivery(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []operators.Option
		ahead int
	}{
		{"without", nil, 100},
		{"with", []operators.Option{operators.MaxUncommitted(8)}, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := operators.NewWatermark()
				var mu sync.Mutex
				ahead := 0
				opts := append([]operators.Option{operators.Concurrency(4), operators.Window(64),
					operators.OrderByKey(func(v int) int { return v % 4 }), operators.CommitWatermark(w)}, tc.opts...)
				items := make([]any, 100)
				for i := range items {
					items[i] = i
				}
				m := mustOp(t)(operators.MapResults(nil, func(ctx context.Context, v int) (int, error) {
					mu.Lock()
					ahead = max(ahead, v+1-w.Load())
					mu.Unlock()
					if v == 0 {
						time.Sleep(10 * time.Second)
					} else {
						time.Sleep(time.Millisecond)
					}
					return v, nil
				}, opts...))
				n := 0
				for it := range m(rxgo.Just(items...)()).Observe(rxgo.WithContext(t.Context())) {
					r := it.V.(operators.Result[int, int])
					require.NoError(t, r.Err)
					w.Ack(r.Index)
					n++
				}
				synctest.Wait()
				assert.Equal(t, 100, n)
				assert.Equal(t, 100, w.Load())
				assert.Equal(t, tc.ahead, ahead)
			})
		})
	}
}

func TestMaxUncommittedInvalid(t *testing.T) {
	_, err := operators.Map(nil, double, operators.MaxUncommitted(8))
	require.EqualError(t, err, "operators: MaxUncommitted needs CommitWatermark")
}
