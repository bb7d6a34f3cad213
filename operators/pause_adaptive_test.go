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

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/operators"
)

// An adaptive limiter's refusal holds an element until one of its permits comes free: with a
// limit of 1 and Concurrency(2), four calls of 100ms run one after the other, none refused.
// Before any call ended the limiter has no latency to offer as RetryAfter, so only its
// release notification (levee.ReleaseNotifier) can end the hold.
func TestPauseWhileOpenAdaptiveLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		lim, err := adaptive.New("one", adaptive.Config{InitialLimit: 1, MinLimit: 1, MaxLimit: 1})
		require.NoError(t, err)
		p := levee.DefaultPipeline[int](levee.Patterns{ConcurrencyLimiter: lim}, nil)
		var mu sync.Mutex
		var at []time.Duration
		m := mustOp(t)(operators.Map(p, func(ctx context.Context, v int) (int, error) {
			mu.Lock()
			at = append(at, time.Since(start))
			mu.Unlock()
			time.Sleep(100 * time.Millisecond)
			return v, nil
		}, operators.Concurrency(2), operators.PauseWhileOpen(0)))
		got, _ := observeCtx(t.Context(), m(rxgo.Just(ints(4)...)()))
		assert.Equal(t, []string{"1", "2", "3", "4"}, got)
		ms := 100 * time.Millisecond
		assert.Equal(t, []time.Duration{0, ms, 2 * ms, 3 * ms}, at)
		assert.Equal(t, 4*ms, time.Since(start))
		// Each element after the first was refused and held at least once; a retry woken by a
		// release may meet the permit already taken again, so the count is not exact.
		assert.GreaterOrEqual(t, lim.Metrics().Rejected, uint64(3))
	})
}
