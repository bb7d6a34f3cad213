package operators_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/operators"
)

// An error item of the upstream ends a subscription that stops at errors: with Concurrency,
// the elements the upstream sent after it were still read and called, calls past the end
// that nobody reads, although the operator knew the subscription was over when it read the
// error item.
func TestNoCallPastAnUpstreamErrorItemThatEndsTheSubscription(t *testing.T) {
	for _, concurrency := range []int{1, 4} {
		t.Run(fmt.Sprintf("concurrency %d", concurrency), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				for range 50 {
					var calls atomic.Int32
					m := mustOp(t)(operators.Map(nil, func(_ context.Context, v int) (int, error) {
						calls.Add(1)
						return 2 * v, nil
					}, operators.Concurrency(concurrency), operators.StopOnError()))
					got, _ := observe(m(newProbe(1, errBoom, 2, 3, 4, 5).Observable()))
					synctest.Wait()
					assert.Equal(t, []string{"2", "E:boom"}, got)
					assert.Equal(t, int32(1), calls.Load(), "the element before the error item only")
				}
			})
		})
	}
}
