package ratelimiter_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/ratelimiter"
)

var errBackend = errors.New("backend failed")

// drainLog records what DrainPermissionsOnResult was asked.
type drainLog struct {
	results []any
	errs    []error
	drainIf func(result any, err error) bool
}

func (d *drainLog) predicate(result any, err error) bool {
	d.results = append(d.results, result)
	d.errs = append(d.errs, err)
	return d.drainIf != nil && d.drainIf(result, err)
}

func newDrainingLimiter(t *testing.T, limit int, d *drainLog) *ratelimiter.RateLimiter {
	t.Helper()
	rl, err := ratelimiter.New("test", ratelimiter.Config{LimitForPeriod: limit, LimitRefreshPeriod: time.Second,
		TimeoutDuration: 5 * time.Second, DrainPermissionsOnResult: d.predicate})
	require.NoError(t, err)
	return rl
}

func TestExecuteTakesOnePermissionAndReportsTheResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &drainLog{}
		rl := newDrainingLimiter(t, 3, d)
		calls := 0
		v, err := ratelimiter.Execute(t.Context(), rl, func(context.Context) (int, error) { calls++; return 42, nil })
		require.NoError(t, err)
		assert.Equal(t, 42, v)
		assert.Equal(t, 1, calls)
		assert.Equal(t, 2, available(rl))
		assert.Equal(t, []any{42}, d.results)
		assert.Equal(t, []error{nil}, d.errs)
	})
}

func TestExecuteReturnsTheUsersErrorUnchanged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &drainLog{}
		rl := newDrainingLimiter(t, 3, d)
		v, err := ratelimiter.Execute(t.Context(), rl, func(context.Context) (string, error) {
			return "partial", errBackend
		})
		assert.Same(t, errBackend, err)
		assert.Equal(t, "partial", v, "the call's value is passed through with its error")
		assert.Equal(t, []any{nil}, d.results)
		assert.Equal(t, []error{errBackend}, d.errs)
	})
}

func TestExecuteDrainsWhenThePredicateSaysSo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &drainLog{drainIf: func(result any, err error) bool { return result == "429" || errors.Is(err, errBackend) }}
		rl := newDrainingLimiter(t, 5, d)
		events := record(t, rl)

		_, err := ratelimiter.Execute(t.Context(), rl, func(context.Context) (string, error) { return "200", nil })
		require.NoError(t, err)
		assert.Equal(t, 4, available(rl))
		_, err = ratelimiter.Execute(t.Context(), rl, func(context.Context) (string, error) { return "429", nil })
		require.NoError(t, err)
		assert.Equal(t, 0, available(rl), "drained on the result")

		types := func(es []ratelimiter.Event) (ts []ratelimiter.EventType, drained []int) {
			for _, e := range es {
				ts = append(ts, e.Type)
				if e.Type == ratelimiter.EventDrained {
					drained = append(drained, e.Permits)
				}
			}
			return ts, drained
		}
		ts, drained := types(events.take())
		assert.Equal(t, []ratelimiter.EventType{ratelimiter.EventSuccessfulAcquire, ratelimiter.EventSuccessfulAcquire,
			ratelimiter.EventDrained}, ts)
		assert.Equal(t, []int{3}, drained)

		time.Sleep(time.Second)
		_, err = ratelimiter.Execute(t.Context(), rl, func(context.Context) (string, error) { return "", errBackend })
		assert.Same(t, errBackend, err)
		assert.Equal(t, 0, available(rl), "drained on the error")
	})
}

func TestExecuteDoesNotRunTheCallWhenRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &drainLog{}
		rl, err := ratelimiter.New("test", ratelimiter.Config{LimitForPeriod: 1, LimitRefreshPeriod: time.Second,
			TimeoutDuration: ratelimiter.NoWait, DrainPermissionsOnResult: d.predicate})
		require.NoError(t, err)
		require.NoError(t, rl.AcquirePermission(t.Context(), 1))
		calls := 0
		_, err = ratelimiter.Execute(t.Context(), rl, func(context.Context) (int, error) { calls++; return 1, nil })
		assert.ErrorIs(t, err, ratelimiter.ErrRequestNotPermitted)
		assert.True(t, levee.IsRejection(err))
		assert.Zero(t, calls)
		assert.Empty(t, d.errs, "a refusal is not an outcome of the call")
	})
}

func TestExecuteWaitsForAReservedPermission(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 1, time.Second, 5*time.Second)
		require.NoError(t, rl.AcquirePermission(t.Context(), 1))
		start := time.Now()
		var ranAt time.Duration
		_, err := ratelimiter.Execute(t.Context(), rl, func(context.Context) (int, error) {
			ranAt = time.Since(start)
			return 1, nil
		})
		require.NoError(t, err)
		assert.Equal(t, time.Second, ranAt)
	})
}

func TestExecuteCancelledWhileWaitingDoesNotRunTheCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 1, time.Second, 5*time.Second)
		require.NoError(t, rl.AcquirePermission(t.Context(), 1))
		ctx, cancel := cancelAfter(t.Context(), 300*time.Millisecond)
		defer cancel()
		calls := 0
		_, err := ratelimiter.Execute(ctx, rl, func(context.Context) (int, error) { calls++; return 1, nil })
		assert.ErrorIs(t, err, context.Canceled)
		assert.Zero(t, calls)
		assert.Equal(t, 0, available(rl), "the reservation was given back")
	})
}

func TestExecutePanicIsAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &drainLog{drainIf: func(_ any, err error) bool { return err != nil }}
		rl := newDrainingLimiter(t, 3, d)
		v, err := ratelimiter.Execute(t.Context(), rl, func(context.Context) (int, error) { panic(errBackend) })
		assert.Zero(t, v)
		var pe *levee.PanicError
		require.ErrorAs(t, err, &pe)
		assert.Same(t, errBackend, pe.Value)
		assert.ErrorIs(t, err, errBackend)
		require.Len(t, d.errs, 1)
		assert.Same(t, err, d.errs[0], "the predicate sees the panic as the call's error")
		assert.Equal(t, 0, available(rl), "and drained on it")
	})
}

func TestExecuteCallerCancellationIsNotReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &drainLog{drainIf: func(_ any, err error) bool { return err != nil }}
		rl := newDrainingLimiter(t, 3, d)
		ctx, cancel := context.WithCancel(t.Context())
		_, err := ratelimiter.Execute(ctx, rl, func(ctx context.Context) (int, error) {
			cancel()
			return 0, ctx.Err()
		})
		assert.ErrorIs(t, err, context.Canceled)
		assert.Empty(t, d.errs, "the caller's own cancellation is not an outcome")
		assert.Equal(t, 2, available(rl))

		// A call failing with a cancellation of its own, the caller's context alive, is.
		_, err = ratelimiter.Execute(t.Context(), rl, func(context.Context) (int, error) { return 0, context.Canceled })
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, []error{context.Canceled}, d.errs)
		assert.Equal(t, 0, available(rl))
	})
}

func TestExecuteRefusesNils(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 3, time.Second, 5*time.Second)
		_, err := ratelimiter.Execute[int](t.Context(), rl, nil)
		assert.ErrorIs(t, err, levee.ErrNilCall)
		assert.Equal(t, 3, available(rl), "no permission taken for a nil call")

		_, err = ratelimiter.Execute(t.Context(), nil, func(context.Context) (int, error) { return 1, nil })
		assert.ErrorIs(t, err, ratelimiter.ErrNilRateLimiter)

		var ctx context.Context // nil: Background
		var got context.Context
		_, err = ratelimiter.Execute(ctx, rl, func(ctx context.Context) (int, error) { got = ctx; return 1, nil })
		require.NoError(t, err)
		assert.Equal(t, context.Background(), got)
	})
}

func TestOnResultAndOnErrorWithoutPredicateDoNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 3, time.Second, 5*time.Second)
		rl.OnResult("429")
		rl.OnError(errBackend)
		assert.Equal(t, 3, available(rl))
	})
}

func TestOnResultAndOnErrorAskThePredicate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &drainLog{drainIf: func(result any, _ error) bool { return result == "429" }}
		rl := newDrainingLimiter(t, 3, d)
		rl.OnResult("200")
		rl.OnError(errBackend)
		assert.Equal(t, 3, available(rl))
		rl.OnResult("429")
		assert.Equal(t, 0, available(rl))
		assert.Equal(t, []any{"200", nil, "429"}, d.results)
		assert.Equal(t, []error{nil, errBackend, nil}, d.errs)
	})
}
