package operators_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/operators"
)

// guardedTicks returns n guarded sources of 50 values 1ms apart.
func guardedTicks(t *testing.T, n int) []rxgo.Observable {
	obs := make([]rxgo.Observable, n)
	for i := range obs {
		obs[i] = mustGuard(t)(operators.Guard(levee.Patterns{}, nil, tickSource(50, time.Millisecond)))
	}
	return obs
}

// TestMergeAgainstRxgoMergeAfterCancel shows what Merge's doc says of rxgo's own Merge, on
// the real scheduler with goleak.Find (a leak cannot be waited for under synctest): the
// subscriber takes one item, cancels its context and stops reading, as rxgo's terminal
// operators do once their context ends. rxgo.Merge's Observable ignores the subscriber's
// context (Observe returns the merged channel itself) and its goroutine per source sends on
// that unbuffered channel with no way out, so each stays blocked there, and each source
// behind it; operators.Merge, over the same guarded sources, leaves nothing running.
func TestMergeAgainstRxgoMergeAfterCancel(t *testing.T) {
	t.Run("rxgo.Merge leaks", func(t *testing.T) {
		before := goleak.IgnoreCurrent()
		ctx, cancel := context.WithCancel(t.Context())
		merged := rxgo.Merge(guardedTicks(t, 3))
		ch := merged.Observe(rxgo.WithContext(ctx))
		<-ch
		cancel()

		err := goleak.Find(before)
		require.Error(t, err, "rxgo.Merge left nothing running after the cancel")
		// One goroutine per source blocked on its send to the merged channel.
		assert.Equal(t, 3, strings.Count(err.Error(), "github.com/reactivex/rxgo/v2.Merge.func1("), err.Error())
		t.Logf("after the cancel, %d goroutines left running", strings.Count(err.Error(), "Goroutine "))

		// Clean up for the package's goleak check: reading on completes the blocked sends,
		// and the finite sources end.
		for range merged.Observe() {
		}
		require.NoError(t, goleak.Find(before))
	})

	t.Run("operators.Merge does not", func(t *testing.T) {
		before := goleak.IgnoreCurrent()
		ctx, cancel := context.WithCancel(t.Context())
		ch := operators.Merge(guardedTicks(t, 3)...).Observe(rxgo.WithContext(ctx))
		<-ch
		cancel()

		require.NoError(t, goleak.Find(before))
	})
}
