package operators_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/operators"
)

// An error the upstream emitted before its consumer cancelled is a failure of the breaker, as
// it is an ERROR of the time limiter, however soon after it the consumer left; an error that is
// the consumer's own cancellation is not recorded. The breaker took the consumer's context
// first and released the permission unrecorded.
func TestCircuitBreakerRecordsAnErrorEmittedBeforeTheConsumerCancelled(t *testing.T) {
	for _, tc := range []struct {
		name        string
		cancelFirst bool // the consumer cancels, then the upstream emits context.Canceled
		wantFailed  int
	}{
		{"error then cancel", false, 200},
		{"cancel then its error", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cb := newBreaker(t, circuitbreaker.Config{SlidingWindowSize: 1000, MinimumNumberOfCalls: 1000})
				for range 200 {
					ctx, cancel := context.WithCancel(context.Background())
					up := rxgo.Defer([]rxgo.Producer{func(_ context.Context, next chan<- rxgo.Item) {
						if tc.cancelFirst {
							cancel()
							select { // the operator may have left already
							case next <- rxgo.Error(context.Canceled):
							case <-time.After(time.Second):
							}
							return
						}
						next <- rxgo.Error(errBoom)
						cancel()
					}})
					for range operators.CircuitBreaker(cb)(up).Observe(rxgo.WithContext(ctx)) {
					}
					synctest.Wait()
					require.Equal(t, context.Canceled, ctx.Err(), "the consumer cancelled")
				}
				time.Sleep(time.Second) // producers whose item nobody took give up
				synctest.Wait()
				m := cb.Metrics()
				assert.Equal(t, tc.wantFailed, m.NumberOfFailedCalls)
				assert.Equal(t, 0, m.NumberOfSuccessfulCalls)
				assert.Equal(t, tc.wantFailed, m.NumberOfBufferedCalls)
			})
		})
	}
}
