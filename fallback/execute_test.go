package fallback_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/internal/safe"
)

var errPriceUnavailable = errors.New("price unavailable")

func TestExecuteLiveAnswer(t *testing.T) {
	called := 0
	f := labelled(t, fallback.OnAny(func(context.Context, error) (string, error) { called++; return "fallback", nil }))
	v, out, err := fallback.ExecuteOutcome(context.Background(), f, func(context.Context) (string, error) { return "live", nil })
	require.NoError(t, err)
	assert.Equal(t, "live", v)
	assert.Equal(t, fallback.Outcome{}, out)
	assert.Equal(t, 0, called)
	assert.Equal(t, fallback.Metrics{}, f.Metrics())
}

func TestExecuteNilContextIsBackground(t *testing.T) {
	var callCtx, handlerCtx context.Context
	f := labelled(t, fallback.OnAny(func(ctx context.Context, _ error) (string, error) { handlerCtx = ctx; return "fb", nil }))
	//lint:ignore SA1012 a nil context is what is being tested
	v, err := fallback.Execute(nil, f, func(ctx context.Context) (string, error) { callCtx = ctx; return "", errBoom })
	require.NoError(t, err)
	assert.Equal(t, "fb", v)
	assert.Equal(t, context.Background(), callCtx)
	assert.Equal(t, context.Background(), handlerCtx)

	//lint:ignore SA1012 a nil context is what is being tested
	v, ok, err := f.Recover(nil, errBoom)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "fb", v)
}

func TestExecuteNilCallIsRefusedNotAnswered(t *testing.T) {
	called := 0
	f := labelled(t, fallback.OnAny(func(context.Context, error) (string, error) { called++; return "fb", nil }))
	v, out, err := fallback.ExecuteOutcome(context.Background(), f, nil)
	assert.ErrorIs(t, err, safe.ErrNilCall)
	assert.Empty(t, v)
	assert.Equal(t, fallback.Outcome{}, out)
	assert.Equal(t, 0, called)
	assert.Equal(t, fallback.Metrics{}, f.Metrics())

	_, err = fallback.Execute(context.Background(), f, nil)
	assert.ErrorIs(t, err, safe.ErrNilCall)
}

func TestNilFallbackNeverPanics(t *testing.T) {
	var f *fallback.Fallback[string]
	ran := false
	call := func(context.Context) (string, error) { ran = true; return "live", nil }

	_, err := fallback.Execute(context.Background(), f, call)
	assert.ErrorIs(t, err, fallback.ErrNilFallback)
	_, out, err := fallback.ExecuteOutcome(context.Background(), f, call)
	assert.ErrorIs(t, err, fallback.ErrNilFallback)
	assert.Equal(t, fallback.Outcome{}, out)
	assert.False(t, ran, "the call must not run without its fallback")

	_, ok, err := f.Recover(context.Background(), errBoom)
	assert.False(t, ok)
	assert.ErrorIs(t, err, fallback.ErrNilFallback)
	assert.ErrorIs(t, err, errBoom)
	_, _, err = f.Handle(context.Background(), "v", nil)
	assert.Equal(t, fallback.ErrNilFallback, err)

	assert.Equal(t, "", f.Name())
	assert.Equal(t, fallback.Metrics{}, f.Metrics())
	f.Subscribe(func(fallback.Event) {})()
}

func TestExecuteAnswersOnlyFailures(t *testing.T) {
	f := labelled(t, fallback.OnError(errBoom, answer("fb")))
	calls := 0
	call := func(context.Context) (string, error) {
		calls++
		if calls == 1 {
			return "live", nil
		}
		return "", errBoom
	}
	v, err := fallback.Execute(context.Background(), f, call)
	require.NoError(t, err)
	assert.Equal(t, "live", v)
	v, err = fallback.Execute(context.Background(), f, call)
	require.NoError(t, err)
	assert.Equal(t, "fb", v)
	assert.Equal(t, 2, calls)
	assert.Equal(t, fallback.Metrics{NumberOfFallbackAnswers: 1}, f.Metrics())
}

func TestRecoverAndHandle(t *testing.T) {
	f := labelled(t, fallback.OnError(errBoom, answer("fb")))

	v, ok, err := f.Recover(context.Background(), nil)
	assert.Equal(t, "", v)
	assert.False(t, ok)
	assert.NoError(t, err)

	v, ok, err = f.Recover(context.Background(), fmt.Errorf("x: %w", errBoom))
	assert.Equal(t, "fb", v)
	assert.True(t, ok)
	assert.NoError(t, err)

	v, ok, err = f.Recover(context.Background(), errOther)
	assert.Equal(t, "", v)
	assert.False(t, ok)
	assert.True(t, err == errOther)

	// Handle discards a failed call's value, answered or not.
	v, out, err := f.Handle(context.Background(), "partial", errOther)
	assert.Equal(t, "", v)
	assert.Equal(t, fallback.Outcome{}, out)
	assert.True(t, err == errOther)

	v, out, err = f.Handle(context.Background(), "live", nil)
	assert.Equal(t, "live", v)
	assert.Equal(t, fallback.Outcome{}, out)
	assert.NoError(t, err)

	assert.Equal(t, fallback.Metrics{NumberOfFallbackAnswers: 1, NumberOfUnhandledErrors: 2}, f.Metrics())
}

// Seed pitfall: a panic in the guarded call is an error value the fallback sees like any other.
func TestPanicInCallReachesFallback(t *testing.T) {
	var got error
	f := labelled(t, fallback.OnAny(func(_ context.Context, err error) (string, error) { got = err; return "fb", nil }))
	v, out, err := fallback.ExecuteOutcome(context.Background(), f, func(context.Context) (string, error) { panic("kaput") })
	require.NoError(t, err)
	assert.Equal(t, "fb", v)
	var pe *safe.PanicError
	require.ErrorAs(t, got, &pe)
	assert.Equal(t, "kaput", pe.Value)
	assert.NotEmpty(t, pe.Stack)
	assert.True(t, out.Fallback)
	assert.True(t, out.Cause == got)

	// A typed handler for panics is chosen over a sentinel the panic value wraps.
	f = labelled(t,
		fallback.OnError(errBoom, answer("boom")),
		fallback.OnType(func(_ context.Context, pe *safe.PanicError) (string, error) {
			return fmt.Sprint("panic: ", pe.Value), nil
		}))
	v, err = fallback.Execute(context.Background(), f, func(context.Context) (string, error) { panic(errBoom) })
	require.NoError(t, err)
	assert.Equal(t, "panic: boom", v)

	// Without a handler for it the panic comes back as a *PanicError, not a crash.
	f = labelled(t, fallback.OnError(errNotFound, answer("n")))
	_, err = fallback.Execute(context.Background(), f, func(context.Context) (string, error) { panic("kaput") })
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "kaput", pe.Value)
	assert.Equal(t, fallback.Metrics{NumberOfUnhandledErrors: 1}, f.Metrics())
}

// Seed pitfall: an exception thrown by the fallback replaces the original. In levee the
// handler's error and the original are both in the returned chain.
func TestHandlerErrorKeepsTheOriginal(t *testing.T) {
	cause := &GatewayError{Status: 503, Err: errBoom}
	f := labelled(t, fallback.OnAny(func(context.Context, error) (string, error) { return "ignored", errPriceUnavailable }))
	v, out, err := fallback.ExecuteOutcome(context.Background(), f, failing[string](cause))
	assert.Equal(t, "", v, "a failed handler's value is not returned")
	assert.Equal(t, fallback.Outcome{}, out)
	assert.ErrorIs(t, err, errPriceUnavailable)
	assert.ErrorIs(t, err, cause)
	assert.ErrorIs(t, err, errBoom)
	var gw *GatewayError
	require.ErrorAs(t, err, &gw)
	assert.Same(t, cause, gw)
	var fe *fallback.Error
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, fallback.Error{Name: "pricing", Cause: cause, Err: errPriceUnavailable}, *fe)
	assert.Equal(t, `fallback "pricing": price unavailable (cause: gateway: status 503: boom)`, err.Error())
	assert.Equal(t, fallback.Metrics{NumberOfFailedFallbacks: 1}, f.Metrics())
}

func TestHandlerReturningTheCauseItself(t *testing.T) {
	f := labelled(t, fallback.OnAny(func(_ context.Context, err error) (string, error) { return "", err }))
	_, err := fallback.Execute(context.Background(), f, failing[string](errBoom))
	var fe *fallback.Error
	require.ErrorAs(t, err, &fe)
	assert.True(t, fe.Err == errBoom && fe.Cause == errBoom)
	assert.Equal(t, `fallback "pricing": boom`, err.Error())
	assert.Equal(t, fallback.Metrics{NumberOfFailedFallbacks: 1}, f.Metrics())
}

func TestHandlerPanicBecomesPanicError(t *testing.T) {
	for name, h := range map[string]fallback.Handler[string]{
		"OnAny":   fallback.OnAny(func(context.Context, error) (string, error) { panic("handler broke") }),
		"OnError": fallback.OnError(errBoom, func(context.Context, error) (string, error) { panic("handler broke") }),
		"OnType":  fallback.OnType(func(context.Context, *GatewayError) (string, error) { panic("handler broke") }),
	} {
		t.Run(name, func(t *testing.T) {
			f := labelled(t, h)
			cause := &GatewayError{Status: 500, Err: errBoom}
			v, out, err := fallback.ExecuteOutcome(context.Background(), f, failing[string](cause))
			assert.Equal(t, "", v)
			assert.Equal(t, fallback.Outcome{}, out)
			var pe *safe.PanicError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, "handler broke", pe.Value)
			assert.ErrorIs(t, err, cause)
			assert.Equal(t, `fallback "pricing": levee: panic: handler broke (cause: gateway: status 500: boom)`, err.Error())
			assert.Equal(t, fallback.Metrics{NumberOfFailedFallbacks: 1}, f.Metrics())
		})
	}
}

func TestSuccessPathAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	plain := labelled(t, fallback.OnAny(fallback.Value(0)), fallback.OnError(errBoom, fallback.Value(1)))
	withResult := labelled(t, fallback.OnAny(fallback.Value(0)),
		fallback.OnResult(func(v int) bool { return v < 0 }, func(context.Context, int) (int, error) { return 0, nil }))
	subscribed := labelled(t, fallback.OnAny(fallback.Value(0)))
	defer subscribed.Subscribe(func(fallback.Event) {})()

	for name, f := range map[string]*fallback.Fallback[int]{"plain": plain, "with result handler": withResult, "subscribed": subscribed} {
		t.Run(name, func(t *testing.T) {
			// The call is a closure over a local: it stays on the stack only if Execute does not
			// let it escape, so zero allocations also proves call does not leak.
			allocs := testing.AllocsPerRun(1000, func() {
				n := 41
				v, err := fallback.Execute(ctx, f, func(context.Context) (int, error) { n++; return n, nil })
				if err != nil || v != 42 {
					panic("wrong answer")
				}
			})
			assert.Zero(t, allocs, "Execute")
			allocs = testing.AllocsPerRun(1000, func() {
				n := 41
				v, out, err := fallback.ExecuteOutcome(ctx, f, func(context.Context) (int, error) { n++; return n, nil })
				if err != nil || v != 42 || out.Fallback {
					panic("wrong answer")
				}
			})
			assert.Zero(t, allocs, "ExecuteOutcome")
			allocs = testing.AllocsPerRun(1000, func() {
				if v, _, err := f.Handle(ctx, 42, nil); err != nil || v != 42 {
					panic("wrong answer")
				}
			})
			assert.Zero(t, allocs, "Handle")
		})
	}
}
