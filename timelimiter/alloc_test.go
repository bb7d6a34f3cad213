package timelimiter_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/timelimiter"
)

// maxAllocsPerExecute is the allocation budget of one execution that returns in time: the
// attempt record and the goroutine's closure (2), and context.WithTimeout's context, timer,
// timer callback, cancel function and done channel (5).
const maxAllocsPerExecute = 7

func TestExecuteAllocationBudget(t *testing.T) {
	tl := newLimiter(t, timelimiter.Config{})
	call := func(context.Context) (int, error) { return 1, nil }
	for _, parent := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{"Background", func() (context.Context, context.CancelFunc) { return context.Background(), func() {} }},
		{"cancellable", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }},
	} {
		ctx, cancel := parent.ctx()
		allocs := testing.AllocsPerRun(1000, func() {
			if v, err := timelimiter.Execute(ctx, tl, call); err != nil || v != 1 {
				t.Fatal("unexpected result")
			}
		})
		cancel()
		t.Logf("%s parent: %.0f allocs per execution", parent.name, allocs)
		assert.LessOrEqual(t, allocs, float64(maxAllocsPerExecute), parent.name)
	}
}

// A timeout costs what a call that returns in time costs plus its *TimeoutError, which carries
// the limiter's name. With DisableCancelRunningFuture the attempt's context.WithCancel and a
// timer of the caller's own cost one allocation more than context.WithTimeout.
func TestTimeoutAllocationBudget(t *testing.T) {
	for _, tc := range []struct {
		disable bool
		budget  float64
	}{
		{false, maxAllocsPerExecute + 1},
		{true, maxAllocsPerExecute + 2},
	} {
		disable := tc.disable
		t.Run(fmt.Sprintf("DisableCancelRunningFuture=%v", disable), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tl := newLimiter(t, timelimiter.Config{TimeoutDuration: time.Second, DisableCancelRunningFuture: disable})
				// The abandoned call ends before the next one is abandoned, so that its
				// goroutine is reused rather than a new one allocated.
				release := make(chan struct{}, 1)
				call := func(context.Context) (int, error) { <-release; return 1, nil }
				ctx := context.Background()
				allocs := testing.AllocsPerRun(100, func() {
					if _, err := timelimiter.Execute(ctx, tl, call); !errors.Is(err, timelimiter.ErrTimeout) {
						t.Fatal("unexpected result")
					}
					release <- struct{}{}
					synctest.Wait()
				})
				t.Logf("%.0f allocs per timeout", allocs)
				assert.LessOrEqual(t, allocs, tc.budget)
			})
		})
	}
}
