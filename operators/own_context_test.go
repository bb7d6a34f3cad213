package operators_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/operators"
)

// ownContext is a context of the caller's own type, not one of package context's: the
// contexts derived from it learn of its end from a goroutine of package context's.
type ownContext struct {
	once sync.Once
	done chan struct{}
}

func newOwnContext() *ownContext { return &ownContext{done: make(chan struct{})} }

func (c *ownContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *ownContext) Done() <-chan struct{}       { return c.done }
func (c *ownContext) Value(any) any               { return nil }
func (c *ownContext) cancel()                     { c.once.Do(func() { close(c.done) }) }
func (c *ownContext) Err() error {
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}

// Once a consumer's context of its own type is done, the per-emission operators emit nothing
// more, even to a consumer still reading. They watched only the context they derive from it,
// which package context cancels a moment later: the items ready at the cancellation came out.
func TestNothingIsEmittedAfterAConsumerContextOfItsOwnTypeIsDone(t *testing.T) {
	for _, concurrency := range []int{1, 4} {
		for _, tc := range []struct {
			name string
			op   operators.Operator
		}{
			{"Map", mustOp(t)(operators.Map[int, int](nil, double, operators.Concurrency(concurrency), operators.Buffer(0)))},
			{"MapResults", mustOp(t)(operators.MapResults[int, int](nil, double, operators.Concurrency(concurrency), operators.Buffer(0)))},
			{"FlatMap", mustOp(t)(operators.FlatMap[int, int](nil, func(_ context.Context, v int) ([]int, error) {
				return []int{v, v}, nil
			}, operators.Concurrency(concurrency), operators.Buffer(0)))},
		} {
			t.Run(fmt.Sprintf("%s concurrency %d", tc.name, concurrency), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					ctx := newOwnContext()
					ch := tc.op(rxgo.Just(1, 2, 3, 4, 5, 6, 7, 8)()).Observe(rxgo.WithContext(ctx))
					synctest.Wait() // the first item waits for the consumer
					ctx.cancel()
					got := []string{}
					for it := range ch {
						got = append(got, show(it))
					}
					assert.Equal(t, []string{}, got)
				})
			})
		}
	}
}
