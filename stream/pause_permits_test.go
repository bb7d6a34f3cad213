package stream_test

import (
	"context"
	"sort"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/stream"
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
		bh, err := bulkhead.New("bh", bulkhead.Config{MaxConcurrentCalls: 2})
		require.NoError(t, err)
		var mu sync.Mutex
		var at []time.Duration
		p := levee.Compose[int]().WithBulkhead(bh)
		out, err := stream.Map(t.Context(), feed(t.Context(), count(4)...), p,
			func(ctx context.Context, v int) (int, error) {
				mu.Lock()
				at = append(at, time.Since(start))
				mu.Unlock()
				time.Sleep(100 * time.Millisecond)
				return v, nil
			}, stream.Concurrency(3), stream.Window(4), stream.PauseWhileOpen(0))
		require.NoError(t, err)
		rs := drain(out)
		require.Equal(t, count(4), indexes(rs))
		for _, r := range rs {
			require.NoError(t, r.Err)
		}
		sort.Slice(at, func(i, j int) bool { return at[i] < at[j] })
		ms := 100 * time.Millisecond
		assert.Equal(t, []time.Duration{0, 0, ms, ms}, at)
		assert.Equal(t, 2*ms, time.Since(start))
		assert.Equal(t, 2, available(bh))
	})
}
