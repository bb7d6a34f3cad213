package operators_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/operators"
	"github.com/levee-go/levee/stream"
)

// Once a consumer's context of its own type is done, FromSource's emit refuses the element
// with the context's error, and FromChan and FromResults emit nothing more. They watched only
// the context they derive from it, which package context cancels a moment later: every
// element came out and emit reported none of them refused.
func TestFromSourceRefusesElementsOnceAConsumerContextOfItsOwnTypeIsDone(t *testing.T) {
	t.Run("FromSource", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var emitErr error
			obs := operators.FromSource(func(_ context.Context, emit func(int) error) error {
				for i := range 8 {
					if emitErr = emit(i); emitErr != nil {
						return emitErr
					}
				}
				return nil
			})
			ctx := newOwnContext()
			ch := obs.Observe(rxgo.WithContext(ctx))
			synctest.Wait() // the first element waits for the consumer
			ctx.cancel()
			got := []string{}
			for it := range ch {
				got = append(got, show(it))
			}
			assert.Equal(t, []string{}, got)
			assert.Equal(t, context.Canceled, emitErr)
		})
	})
	t.Run("FromResults", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			obs := operators.FromResults(func(context.Context) (<-chan stream.Result[int, int], error) {
				ch := make(chan stream.Result[int, int], 8)
				for i := range 8 {
					ch <- stream.Result[int, int]{Index: i, In: i, Value: i}
				}
				close(ch)
				return ch, nil
			})
			ctx := newOwnContext()
			ch := obs.Observe(rxgo.WithContext(ctx))
			synctest.Wait() // the first value waits for the consumer
			ctx.cancel()
			got := []string{}
			for it := range ch {
				got = append(got, show(it))
			}
			assert.Equal(t, []string{}, got)
		})
	})
}
