package safe

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var errX = errors.New("x")

func TestCallTurnsPanicsIntoErrors(t *testing.T) {
	v, err := Call(context.Background(), func(context.Context) (int, error) { panic("boom") })
	var pe *PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "boom", pe.Value)
	assert.Equal(t, 0, v, "the zero value comes back with a panic")
	assert.Contains(t, string(pe.Stack), "safe_test.go")
	assert.Equal(t, "levee: panic: boom", err.Error())
	assert.Nil(t, pe.Unwrap())

	_, err = Call(context.Background(), func(context.Context) (int, error) { panic(errX) })
	assert.ErrorIs(t, err, errX, "a panic with an error value unwraps to it")

	_, err = Call[int](context.Background(), nil)
	assert.ErrorIs(t, err, ErrNilCall)

	v, err = Call(context.Background(), func(context.Context) (int, error) { return 7, errX })
	assert.Equal(t, 7, v)
	assert.ErrorIs(t, err, errX)
}

func TestCallDoesNotAllocateOnSuccess(t *testing.T) {
	ctx := context.Background()
	n := 3
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		_, _ = Call(ctx, func(context.Context) (int, error) { return n, nil })
	}))
}

func TestCtx(t *testing.T) {
	assert.Equal(t, context.Background(), Ctx(nil)) //nolint:staticcheck // nil on purpose
	ctx := context.WithValue(context.Background(), errX, 1)
	assert.Equal(t, ctx, Ctx(ctx))
}

func TestCallerCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	assert.False(t, CallerCancelled(ctx, context.Canceled), "the caller's context is not done yet")
	cancel()
	assert.True(t, CallerCancelled(ctx, context.Canceled))
	assert.True(t, CallerCancelled(ctx, fmt.Errorf("call: %w", context.Canceled)))
	assert.False(t, CallerCancelled(ctx, errX))
	assert.False(t, CallerCancelled(ctx, nil))

	cause := errors.New("shutting down")
	cctx, ccancel := context.WithCancelCause(context.Background())
	ccancel(cause)
	assert.True(t, CallerCancelled(cctx, cause), "the context's cause counts as its cancellation")
}

type panickyIs struct{}

func (*panickyIs) Error() string { return "panicky" }
func (*panickyIs) Is(error) bool { panic("Is bug") }

func TestIsSurvivesPanickingIsMethods(t *testing.T) {
	assert.False(t, Is(&panickyIs{}, errX))
	assert.True(t, Is(fmt.Errorf("w: %w", errX), errX))
}

func TestPredicateAndValue(t *testing.T) {
	assert.True(t, Predicate(func(int) bool { return true }, 1, false))
	assert.True(t, Predicate(func(int) bool { panic("bug") }, 1, true))
	assert.False(t, Predicate(func(int) bool { panic("bug") }, 1, false))
	assert.Equal(t, 2, Value(func(i int) int { return i * 2 }, 1, -1))
	assert.Equal(t, -1, Value(func(int) int { panic("bug") }, 1, -1))
}
