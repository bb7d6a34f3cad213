package operators_test

import (
	"context"
	"sort"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/operators"
)

// Permits coming free run every held element they can, not one: Concurrency(3) over a
// bulkhead of 2 with no wait, four calls of 100ms. Calls 1 and 2 start at once, 3 and 4 are
// refused and held; at 100ms both permits come free and both held elements start.
func TestPauseWhileOpenFreedPermits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		bh := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 2})
		var mu sync.Mutex
		var at []time.Duration
		m := mustOp(t)(operators.Map(levee.Compose[int]().WithBulkhead(bh), func(ctx context.Context, v int) (int, error) {
			mu.Lock()
			at = append(at, time.Since(start))
			mu.Unlock()
			time.Sleep(100 * time.Millisecond)
			return v, nil
		}, operators.Concurrency(3), operators.PauseWhileOpen(0)))
		got, _ := observeCtx(t.Context(), m(rxgo.Just(ints(4)...)()))
		assert.Equal(t, []string{"1", "2", "3", "4"}, got)
		sort.Slice(at, func(i, j int) bool { return at[i] < at[j] })
		ms := 100 * time.Millisecond
		assert.Equal(t, []time.Duration{0, 0, ms, ms}, at)
		assert.Equal(t, 2*ms, time.Since(start))
		assert.Equal(t, 2, bh.Metrics().AvailableConcurrentCalls)
	})
}
