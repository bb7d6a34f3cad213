package stream_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/stream"
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

// Once a consumer's context of its own type is done, Map and Subscribe send nothing more, even
// to a consumer still reading. They watched only the contexts they derive from it, which
// package context cancels a moment later: every result ready at the cancellation was delivered.
func TestNothingIsSentAfterAConsumerContextOfItsOwnTypeIsDone(t *testing.T) {
	for _, concurrency := range []int{1, 4} {
		t.Run(fmt.Sprintf("Map concurrency %d", concurrency), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				in := make(chan int, 8)
				for i := range 8 {
					in <- i
				}
				close(in)
				ctx := newOwnContext()
				out, err := stream.Map(ctx, in, nil, func(_ context.Context, v int) (int, error) { return v, nil },
					stream.Concurrency(concurrency), stream.Buffer(0))
				require.NoError(t, err)
				synctest.Wait() // the first result waits for the consumer
				ctx.cancel()
				assert.Empty(t, drain(out))
			})
		})
	}
	t.Run("Subscribe", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cb, err := circuitbreaker.New("cb", circuitbreaker.Config{})
			require.NoError(t, err)
			ctx := newOwnContext()
			var emitErr error
			out, err := stream.Subscribe(ctx, levee.Patterns{CircuitBreaker: cb}, func(_ context.Context, emit func(int) error) error {
				for i := range 8 {
					if emitErr = emit(i); emitErr != nil {
						return emitErr
					}
				}
				return nil
			}, stream.Buffer(0))
			require.NoError(t, err)
			synctest.Wait() // the first element waits for the consumer
			ctx.cancel()
			assert.Empty(t, drain(out))
			assert.Equal(t, context.Canceled, emitErr)
			m := cb.Metrics()
			assert.Equal(t, 0, m.NumberOfFailedCalls, "the consumer's departure is no failure")
			assert.Equal(t, 1, m.NumberOfSuccessfulCalls, "an element had been emitted")
		})
	})
}
