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
// bulkhead of 2 with no wait, four calls of 100ms. Two calls start at once, the third is
// refused and held, the fourth waits for a worker; at 100ms both permits come free and both
// start. Window(4) lets the fourth be taken while the first three are unsent: with the default
// window of 3, a held first element keeps the results of the next two from being sent, so the
// fourth is not taken before 200ms — the window's promise, not the pause's.
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
		}, operators.Concurrency(3), operators.Window(4), operators.PauseWhileOpen(0)))
		got, _ := observeCtx(t.Context(), m(rxgo.Just(ints(4)...)()))
		assert.Equal(t, []string{"1", "2", "3", "4"}, got)
		sort.Slice(at, func(i, j int) bool { return at[i] < at[j] })
		ms := 100 * time.Millisecond
		assert.Equal(t, []time.Duration{0, 0, ms, ms}, at)
		assert.Equal(t, 2*ms, time.Since(start))
		assert.Equal(t, 2, bh.Metrics().AvailableConcurrentCalls)
	})
}
