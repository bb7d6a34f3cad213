package operators_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/operators"
)

func TestCollectReturnsTheValuesAndTheFirstError(t *testing.T) {
	vs, err := operators.Collect[int](context.Background(), rxgo.Just(1, 2, 3)())
	assert.NoError(t, err)
	assert.Equal(t, []int{1, 2, 3}, vs)

	vs, err = operators.Collect[int](nil, newProbe(1, errBoom, 3).Observable()) //nolint:staticcheck // a nil ctx is Background
	assert.Same(t, errBoom, err)
	assert.Equal(t, []int{1}, vs)
}

func TestCollectReportsCancellationWhereRxgoToSliceReportsCompletion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newProbe(1)
		p.hang = true
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		var vs []int
		var err error
		go func() {
			defer close(done)
			vs, err = operators.Collect[int](ctx, p.Observable())
		}()
		synctest.Wait()
		cancel()
		<-done
		assert.Equal(t, []int{1}, vs)
		assert.ErrorIs(t, err, context.Canceled)

		// rxgo's own ToSlice: the same cancellation passes for a complete stream.
		ctx, cancel = context.WithCancel(context.Background())
		var rxErr error
		done = make(chan struct{})
		go func() {
			defer close(done)
			_, rxErr = p.Observable().ToSlice(0, rxgo.WithContext(ctx))
		}()
		synctest.Wait()
		cancel()
		<-done
		assert.NoError(t, rxErr)
	})
}

func TestForEachStopsAtTheFirstErrorAndCancelsTheUpstream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newProbe(1, 2, 3, 4)
		p.hang = true
		errStop := errors.New("enough")
		var seen []int
		err := operators.ForEach(context.Background(), p.Observable(), func(v int) error {
			seen = append(seen, v)
			if v == 2 {
				return errStop
			}
			return nil
		})
		assert.Same(t, errStop, err)
		assert.Equal(t, []int{1, 2}, seen)
		synctest.Wait()
		assert.Equal(t, int32(1), p.cancelled.Load())

		err = operators.ForEach(context.Background(), newProbe(1, errBoom, 3).Observable(), func(int) error { return nil })
		assert.Same(t, errBoom, err, "rxgo's ForEach goes on after an error and then reports completion")
	})
}

func TestFirstTakesOneValueAndCancelsTheUpstream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newProbe(ints(100)...)
		v, err := operators.First[int](context.Background(), p.Observable())
		require.NoError(t, err)
		assert.Equal(t, 1, v)
		synctest.Wait()
		assert.Equal(t, int32(1), p.cancelled.Load(), "nothing left blocked upstream")

		_, err = operators.First[int](context.Background(), rxgo.Empty())
		assert.ErrorIs(t, err, operators.ErrEmpty)
		_, err = operators.First[int](context.Background(), newProbe(errBoom, 1).Observable())
		assert.Same(t, errBoom, err)

		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err = operators.First[int](ctx, rxgo.Never())
		assert.ErrorIs(t, err, context.Canceled)
	})
}
