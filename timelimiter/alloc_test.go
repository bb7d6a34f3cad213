package timelimiter_test

import (
	"context"
	"testing"

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
