package retry_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/retry"
)

// TestHammer shares one Retry among 64 goroutines, each making calls of four shapes, while
// others subscribe, unsubscribe and read the metrics. Every call must be counted exactly once
// in its outcome counter, and every attempt once in NumberOfTotalCalls.
func TestHammer(t *testing.T) {
	const (
		goroutines = 64
		calls      = 40 // per goroutine, 10 of each shape
	)
	synctest.Test(t, func(t *testing.T) {
		r := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: ms, IgnoreErrors: []error{errInvalid}})
		var retries, successes, errorEvents, ignored atomic.Int64
		r.Subscribe(func(e retry.Event) {
			switch e.Type {
			case retry.EventRetry:
				retries.Add(1)
			case retry.EventSuccess:
				successes.Add(1)
			case retry.EventError:
				errorEvents.Add(1)
			case retry.EventIgnoredError:
				ignored.Add(1)
			}
		})

		var invocations atomic.Int64
		var wrong atomic.Int64
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				for i := range calls {
					shape := (g + i) % 4
					attempt := 0
					v, err := retry.Execute(context.Background(), r, func(context.Context) (int, error) {
						invocations.Add(1)
						attempt++
						switch {
						case shape == 0: // succeeds at once
							return attempt, nil
						case shape == 1 && attempt == 2: // succeeds on the second attempt
							return attempt, nil
						case shape == 3: // not retried
							return 0, errInvalid
						default: // fails every attempt
							return 0, errGateway
						}
					})
					ok := map[int]bool{
						0: err == nil && v == 1,
						1: err == nil && v == 2,
						2: err != nil && attempt == 3,
						3: err == errInvalid && attempt == 1,
					}[shape]
					if !ok {
						wrong.Add(1)
					}
				}
			})
		}
		stop := make(chan struct{})
		var churn sync.WaitGroup
		churn.Go(func() { // subscribers come and go while calls run
			for {
				select {
				case <-stop:
					return
				default:
				}
				unsubscribe := r.Subscribe(func(retry.Event) {})
				_ = r.Metrics()
				unsubscribe()
				time.Sleep(100 * time.Microsecond) // blocks, so the fake clock can move
			}
		})
		wg.Wait()
		close(stop)
		churn.Wait()

		const each = goroutines * calls / 4
		require.Zero(t, wrong.Load(), "calls with a wrong outcome")
		assert.Equal(t, retry.Metrics{
			NumberOfSuccessfulCallsWithoutRetryAttempt: each,
			NumberOfSuccessfulCallsWithRetryAttempt:    each,
			NumberOfFailedCallsWithoutRetryAttempt:     each,
			NumberOfFailedCallsWithRetryAttempt:        each,
			NumberOfTotalCalls:                         each * (1 + 2 + 3 + 1),
		}, r.Metrics())
		assert.Equal(t, int64(each*(1+2+3+1)), invocations.Load())
		assert.Equal(t, int64(each*(1+2)), retries.Load())
		assert.Equal(t, int64(each), successes.Load())
		assert.Equal(t, int64(each), errorEvents.Load())
		assert.Equal(t, int64(each), ignored.Load())
	})
}
