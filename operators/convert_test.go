package operators_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/operators"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/stream"
)

// counter returns a channel source of 1..n that counts its opens and its cancellations.
func counter(n int, opens, cancelled *atomic.Int32) func(ctx context.Context) (<-chan int, error) {
	return func(ctx context.Context) (<-chan int, error) {
		opens.Add(1)
		ch := make(chan int)
		go func() {
			defer close(ch)
			for i := 1; i <= n; i++ {
				select {
				case ch <- i:
				case <-ctx.Done():
					cancelled.Add(1)
					return
				}
			}
		}()
		return ch, nil
	}
}

func TestFromChanOpensAStreamPerSubscription(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var opens, cancelled atomic.Int32
		obs := operators.FromChan(counter(3, &opens, &cancelled))
		first, _ := observe(obs)
		second, _ := observe(obs)
		assert.Equal(t, []string{"1", "2", "3"}, first)
		assert.Equal(t, first, second)
		assert.Equal(t, int32(2), opens.Load())

		big := operators.FromChan(counter(1000, &opens, &cancelled))
		assert.Equal(t, []string{"1", "2"}, take(big, 2))
		synctest.Wait()
		assert.Equal(t, int32(1), cancelled.Load(), "the consumer's cancellation reached the channel's feeder")
	})
}

func TestFromChanOpenFailures(t *testing.T) {
	_, items := observe(operators.FromChan(func(context.Context) (<-chan int, error) { return nil, errBoom }))
	require.Len(t, items, 1)
	assert.Same(t, errBoom, items[0].E)
	_, items = observe(operators.FromChan(func(context.Context) (<-chan int, error) { return nil, nil }))
	require.Len(t, items, 1)
	assert.ErrorIs(t, items[0].E, stream.ErrNilChannel)
	_, items = observe(operators.FromChan[int](nil))
	require.Len(t, items, 1)
	assert.ErrorIs(t, items[0].E, levee.ErrNilCall)
}

func TestFromSourceEndsWithTheSourcesErrorOrPanic(t *testing.T) {
	got, _ := observe(operators.FromSource(func(ctx context.Context, emit func(int) error) error {
		_ = emit(1)
		_ = emit(2)
		return errBoom
	}))
	assert.Equal(t, []string{"1", "2", "E:boom"}, got)

	_, items := observe(operators.FromSource(func(ctx context.Context, emit func(int) error) error {
		_ = emit(1)
		panic("source bug")
	}))
	require.Len(t, items, 2)
	var pe *levee.PanicError
	require.ErrorAs(t, items[1].E, &pe)
	assert.Equal(t, "source bug", pe.Value)
}

func TestFromSourceEmitFailsOnceTheConsumerCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var emitErr error
		obs := operators.FromSource(func(ctx context.Context, emit func(int) error) error {
			for i := 1; ; i++ {
				if err := emit(i); err != nil {
					emitErr = err
					return err
				}
			}
		})
		assert.Equal(t, []string{"1", "2", "3"}, take(obs, 3))
		synctest.Wait()
		assert.ErrorIs(t, emitErr, context.Canceled)
	})
}

func TestFromSourceRefusesElementsAfterItReturned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		late := make(chan error, 1)
		obs := operators.FromSource(func(ctx context.Context, emit func(int) error) error {
			go func() {
				time.Sleep(time.Second)
				late <- emit(9) // the output is closed by now: emit must not send on it
			}()
			return emit(1)
		})
		got, _ := observe(obs)
		assert.Equal(t, []string{"1"}, got)
		assert.Error(t, <-late)
	})
}

func TestFromResultsTurnsStreamResultsIntoItems(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		obs := operators.FromResults(func(ctx context.Context) (<-chan stream.Result[int, int], error) {
			in := make(chan int)
			go func() {
				defer close(in)
				for i := 1; i <= 4; i++ {
					select {
					case in <- i:
					case <-ctx.Done():
						return
					}
				}
			}()
			return stream.Map(ctx, in, nil, failOn(3))
		})
		got, _ := observe(obs)
		assert.Equal(t, []string{"2", "4", "E:bad 3", "8"}, got)
		got, _ = observe(obs)
		assert.Equal(t, []string{"2", "4", "E:bad 3", "8"}, got, "observed again, a new stream")
	})
}

func TestFromItemsTurnsAGuardedStreamIntoItems(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := newRetry(t, retry.Config{MaxAttempts: 2, WaitDuration: retry.NoWait})
		src := func(ctx context.Context, emit func(string) error) error {
			_ = emit("x")
			return errBoom
		}
		obs := operators.FromItems(func(ctx context.Context) (<-chan stream.Item[string], error) {
			return stream.Subscribe(ctx, levee.Patterns{Retry: rt}, src)
		})
		_, items := observe(obs)
		require.Len(t, items, 3)
		assert.Equal(t, "x", items[0].V)
		assert.Equal(t, "x", items[1].V)
		assert.ErrorIs(t, items[2].E, retry.ErrMaxRetriesExceeded)
	})
}

func TestToSourceLetsStreamRetryRestartAnObservable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
		var builds atomic.Int32
		src := operators.ToSource[string](flaky(&builds, 2))
		ch, err := stream.Subscribe(context.Background(), levee.Patterns{Retry: rt}, src)
		require.NoError(t, err)
		var got []string
		var attempts []int
		for it := range ch {
			require.NoError(t, it.Err)
			got = append(got, it.Value)
			attempts = append(attempts, it.Attempt)
		}
		assert.Equal(t, []string{"a1", "a2", "a3"}, got)
		assert.Equal(t, []int{1, 2, 3}, attempts)
	})
}

func TestToSourceErrors(t *testing.T) {
	ctx := context.Background()
	emit := func(int) error { return nil }
	emitted := 0
	nilSrc := operators.ToSource[int](nil)
	require.NotNil(t, nilSrc)
	assert.Same(t, levee.ErrNilCall, nilSrc(ctx, func(int) error { emitted++; return nil }))
	assert.Equal(t, 0, emitted)

	err := operators.ToSource[int](func(context.Context) (rxgo.Observable, error) { return rxgo.Just("x")(), nil })(ctx, emit)
	var te *operators.ItemTypeError
	assert.ErrorAs(t, err, &te)

	err = operators.ToSource[int](func(context.Context) (rxgo.Observable, error) { panic("bug") })(ctx, emit)
	var pe *levee.PanicError
	assert.ErrorAs(t, err, &pe)

	errEmit := errors.New("consumer gone")
	err = operators.ToSource[int](func(context.Context) (rxgo.Observable, error) { return rxgo.Just(1)(), nil })(ctx,
		func(int) error { return errEmit })
	assert.Same(t, errEmit, err)

	err = operators.ToSource[int](func(context.Context) (rxgo.Observable, error) { return nil, nil })(ctx, emit)
	assert.ErrorIs(t, err, operators.ErrNilObservable)
}

func TestToChanDeliversValuesThenTheEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		values, errc := operators.ToChan[int](context.Background(), rxgo.Just(1, 2, 3)())
		var got []int
		for v := range values {
			got = append(got, v)
		}
		assert.Equal(t, []int{1, 2, 3}, got)
		assert.NoError(t, <-errc)

		p := newProbe(1, errBoom, 3)
		values, errc = operators.ToChan[int](context.Background(), p.Observable())
		got = nil
		for v := range values {
			got = append(got, v)
		}
		assert.Equal(t, []int{1}, got)
		assert.Same(t, errBoom, <-errc)
		synctest.Wait()
		assert.Equal(t, int32(1), p.cancelled.Load(), "an error ends the stream: the upstream was cancelled")

		values, errc = operators.ToChan[int](context.Background(), rxgo.Just("x")())
		for range values {
		}
		var te *operators.ItemTypeError
		assert.ErrorAs(t, <-errc, &te)
	})
}

func TestToChanReportsCancellationAsAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		p := newProbe(1, 2)
		p.hang = true
		values, errc := operators.ToChan[int](ctx, p.Observable())
		assert.Equal(t, 1, <-values)
		cancel()
		for range values {
		}
		assert.ErrorIs(t, <-errc, context.Canceled)
	})
}
