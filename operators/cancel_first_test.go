package operators_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/operators"
)

// The consumer cancels while the first calls run, before anything was emitted, and keeps
// reading; the calls then return values (they ignore their context). A done context wins
// over a ready send: the output closes with no item.
func TestMapEmitsNothingAfterTheConsumerCancelled(t *testing.T) {
	for _, concurrency := range []int{1, 4} {
		t.Run(fmt.Sprintf("concurrency %d", concurrency), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				src := newProbe(ints(8)...)
				proceed := make(chan struct{})
				m := mustOp(t)(operators.Map(nil, func(_ context.Context, v int) (int, error) {
					<-proceed
					return v, nil
				}, operators.Concurrency(concurrency)))
				ctx, cancel := context.WithCancel(t.Context())
				ch := m(src.Observable()).Observe(rxgo.WithContext(ctx))
				synctest.Wait() // every worker is in a call
				assert.Equal(t, int32(concurrency), src.emitted.Load())
				cancel()
				close(proceed)
				got := []string{}
				for it := range ch {
					got = append(got, show(it))
				}
				assert.Equal(t, []string{}, got)
			})
		})
	}
}

// The same, as it happens in production: many runs, the calls returning as soon as they see
// the cancellation, racing the operator's own check. Not one item may come out.
func TestMapEmitsNothingAfterCancelInManyRuns(t *testing.T) {
	for _, concurrency := range []int{1, 4} {
		delivered := 0
		for range 1000 {
			started := make(chan struct{}, 8)
			m := mustOp(t)(operators.Map(nil, func(ctx context.Context, v int) (int, error) {
				started <- struct{}{}
				<-ctx.Done()
				return v, nil // a call that ignores the cancellation and answers
			}, operators.Concurrency(concurrency)))
			ctx, cancel := context.WithCancel(context.Background())
			ch := m(rxgo.Just(1, 2, 3, 4, 5, 6, 7, 8)()).Observe(rxgo.WithContext(ctx))
			<-started
			cancel()
			for range ch {
				delivered++
			}
		}
		assert.Equal(t, 0, delivered, "concurrency %d", concurrency)
	}
}
