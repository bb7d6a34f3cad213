package operators_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/operators"
)

func newStreamFallback(t *testing.T, handlers ...fallback.Handler[rxgo.Observable]) *fallback.Fallback[rxgo.Observable] {
	t.Helper()
	f, err := fallback.New("fb", handlers...)
	require.NoError(t, err)
	return f
}

func answer(obs rxgo.Observable) func(context.Context, error) (rxgo.Observable, error) {
	return func(context.Context, error) (rxgo.Observable, error) { return obs, nil }
}

func TestFallbackReplacesAFailedStreamAfterItsItems(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newStreamFallback(t, fallback.OnError(errBoom, answer(rxgo.Just(7, 8)())))
		p := newProbe(1, 2, errBoom, 3)
		got, _ := observe(operators.Fallback(f)(p.Observable()))
		assert.Equal(t, []string{"1", "2", "7", "8"}, got)
		synctest.Wait()
		assert.Equal(t, int32(1), p.cancelled.Load(), "the failed upstream was cancelled")
		assert.Equal(t, fallback.Metrics{NumberOfFallbackAnswers: 1}, f.Metrics())
	})
}

func TestFallbackThatFailsTooEndsOnceWithBothErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errCache := errors.New("cache down")
		replacement := newProbe(7, errCache, 8)
		f := newStreamFallback(t, fallback.OnAny(answer(replacement.Observable())))
		got, items := observe(operators.Fallback(f)(newProbe(1, errBoom).Observable()))
		assert.Equal(t, []string{"1", "7", `E:fallback "fb": cache down (cause: boom)`}, got)
		assert.ErrorIs(t, items[2].E, errCache)
		assert.ErrorIs(t, items[2].E, errBoom)
		synctest.Wait()
		assert.Equal(t, int32(1), replacement.subs.Load(), "subscribed once: rxgo's OnErrorResumeNext would loop")
		assert.Equal(t, int32(1), replacement.cancelled.Load())
	})
}

func TestFallbackReplacementErrorHoldingTheCauseEndsAsItIs(t *testing.T) {
	wrapped := fmt.Errorf("still: %w", errBoom)
	f := newStreamFallback(t, fallback.OnAny(answer(newProbe(wrapped).Observable())))
	_, items := observe(operators.Fallback(f)(newProbe(errBoom).Observable()))
	require.Len(t, items, 1)
	assert.Same(t, wrapped, items[0].E)
}

func TestFallbackWithoutAHandlerPassesTheErrorUnchanged(t *testing.T) {
	f := newStreamFallback(t, fallback.OnError(levee.ErrNilCall, answer(rxgo.Just(7)())))
	_, items := observe(operators.Fallback(f)(newProbe(1, errBoom).Observable()))
	require.Len(t, items, 2)
	assert.Same(t, errBoom, items[1].E)
	assert.Equal(t, fallback.Metrics{NumberOfUnhandledErrors: 1}, f.Metrics())
}

func TestFallbackHandlerErrorKeepsTheCause(t *testing.T) {
	errNo := errors.New("no answer")
	f := newStreamFallback(t, fallback.OnAny(func(context.Context, error) (rxgo.Observable, error) { return nil, errNo }))
	_, items := observe(operators.Fallback(f)(newProbe(errBoom).Observable()))
	require.Len(t, items, 1)
	var fe *fallback.Error
	require.ErrorAs(t, items[0].E, &fe)
	assert.ErrorIs(t, items[0].E, errNo)
	assert.ErrorIs(t, items[0].E, errBoom)
}

func TestFallbackAnsweringNilEndsCleanly(t *testing.T) {
	f := newStreamFallback(t, fallback.OnAny(answer(nil)))
	got, _ := observe(operators.Fallback(f)(newProbe(1, errBoom).Observable()))
	assert.Equal(t, []string{"1"}, got)
}

func TestFallbackAnswersBuildErrorsAndPanicsOfALazySource(t *testing.T) {
	f := newStreamFallback(t, fallback.OnAny(answer(rxgo.Just("cached")())))
	failing := operators.Lazy(func(context.Context) (rxgo.Observable, error) { return nil, errBoom })
	got, _ := observe(operators.Fallback(f)(failing))
	assert.Equal(t, []string{"cached"}, got)

	panicking := operators.Lazy(func(context.Context) (rxgo.Observable, error) { panic("bug") })
	got, _ = observe(operators.Fallback(f)(panicking))
	assert.Equal(t, []string{"cached"}, got)
	assert.Equal(t, 2, f.Metrics().NumberOfFallbackAnswers)
}

func TestFallbackIsNotCalledWhenTheConsumerCancels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newStreamFallback(t, fallback.OnAny(answer(rxgo.Just(7)())))
		p := newProbe(1)
		p.hang = true
		assert.Equal(t, []string{"1"}, take(operators.Fallback(f)(p.Observable()), 1))
		assert.Equal(t, fallback.Metrics{}, f.Metrics())
	})
}

func TestFallbackNilFailsEachSubscription(t *testing.T) {
	_, items := observe(operators.Fallback(nil)(rxgo.Just(1)()))
	require.Len(t, items, 1)
	assert.ErrorIs(t, items[0].E, fallback.ErrNilFallback)
}

// panickyIsError is an error whose Is method panics, as a typed nil whose Is reads its
// receiver does.
type panickyIsError struct{}

func (panickyIsError) Error() string { return "panicky" }
func (panickyIsError) Is(error) bool { panic("Is of a broken error") }

func TestFallbackSurvivesAReplacementErrorWhoseIsPanics(t *testing.T) {
	fb := newStreamFallback(t, fallback.OnAny(answer(rxgo.Just(panickyIsError{})())))
	var items []rxgo.Item
	for it := range operators.Fallback(fb)(rxgo.Just(1, errBoom)()).Observe() {
		items = append(items, it)
	}
	require.Len(t, items, 2)
	assert.Equal(t, 1, items[0].V)
	var fe *fallback.Error
	require.ErrorAs(t, items[1].E, &fe, "the replacement's error is kept with the cause, not a crash")
	assert.Equal(t, panickyIsError{}, fe.Err)
	assert.Same(t, errBoom, fe.Cause)
}

// A handler that hands out the same single-use Observable at every failure: the second
// subscription used to find its channel drained and end cleanly, without the cached items and
// without the error.
func TestFallbackRefusesASingleUseReplacementObservedAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ch := make(chan rxgo.Item, 1)
		ch <- rxgo.Of("cached")
		close(ch)
		f := newStreamFallback(t, fallback.OnAny(answer(rxgo.FromChannel(ch))))
		obs := operators.Fallback(f)(newProbe(1, errBoom).Observable())
		got, _ := observe(obs)
		assert.Equal(t, []string{"1", "cached"}, got)
		got, items := observe(obs)
		require.Len(t, got, 2, "not a clean completion")
		assert.Equal(t, "1", got[0])
		assert.ErrorIs(t, items[1].E, operators.ErrSingleUse)
		assert.ErrorIs(t, items[1].E, errBoom, "the failure it answered is kept")
	})
}
