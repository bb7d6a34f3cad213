package circuitbreaker_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	cb "github.com/levee-go/levee/circuitbreaker"
)

func TestExecuteReturnsValueAndError(t *testing.T) {
	b := mustNew(t, cb.Config{SlidingWindowSize: 10})
	v, err := cb.Execute(context.Background(), b, func(context.Context) (string, error) { return "paid", nil })
	require.NoError(t, err)
	assert.Equal(t, "paid", v)

	mine := &httpError{503}
	v, err = cb.Execute(context.Background(), b, func(context.Context) (string, error) { return "partial", mine })
	assert.Same(t, mine, err, "the user's error comes back unchanged")
	assert.Equal(t, "partial", v, "and so does the value returned with it")
	assert.Equal(t, counts{buffered: 2, failed: 1, successful: 1}, countsOf(b.Metrics()))
}

func TestExecutePassesTheContext(t *testing.T) {
	type key struct{}
	b := mustNew(t, cb.Config{})
	ctx := context.WithValue(context.Background(), key{}, "v")
	got, err := cb.Execute(ctx, b, func(ctx context.Context) (any, error) { return ctx.Value(key{}), nil })
	require.NoError(t, err)
	assert.Equal(t, "v", got)
}

func TestExecuteWithNilArguments(t *testing.T) {
	b := mustNew(t, small())
	require.NoError(t, b.TransitionToOpenState())
	require.NoError(t, b.TransitionToHalfOpenState())

	//nolint:staticcheck // a nil context is what is being tested
	v, err := cb.Execute(nil, b, func(ctx context.Context) (int, error) {
		require.NotNil(t, ctx)
		return 7, ctx.Err()
	})
	require.NoError(t, err)
	assert.Equal(t, 7, v)

	_, err = cb.Execute[int](context.Background(), b, nil)
	assert.ErrorIs(t, err, levee.ErrNilCall)
	assert.Equal(t, 1, b.Metrics().NumberOfBufferedCalls, "nil calls are neither run nor recorded")
	assert.NoError(t, try(b), "and took no permit: one of two is left")

	var nilCB *cb.CircuitBreaker
	_, err = cb.Execute(context.Background(), nilCB, func(context.Context) (int, error) { return 1, nil })
	assert.ErrorIs(t, err, cb.ErrNilCircuitBreaker)
	p, err := nilCB.Acquire()
	assert.ErrorIs(t, err, cb.ErrNilCircuitBreaker)
	assert.Equal(t, cb.Permit{}, p)
}

func TestExecuteRefusedCallIsNotRun(t *testing.T) {
	b, err := cb.New("payment", cb.Config{InitialState: cb.Open})
	require.NoError(t, err)
	runs := 0
	v, err := cb.Execute(context.Background(), b, func(context.Context) (int, error) { runs++; return 1, nil })
	assert.Equal(t, 0, runs)
	assert.Equal(t, 0, v)
	require.ErrorIs(t, err, cb.ErrCallNotPermitted)
	assert.True(t, levee.IsRejection(err))
	var cnp *cb.CallNotPermittedError
	require.ErrorAs(t, err, &cnp)
	assert.Equal(t, cb.CallNotPermittedError{Name: "payment", State: cb.Open}, *cnp)
	assert.Equal(t, "circuitbreaker: CircuitBreaker 'payment' is OPEN and does not permit further calls", err.Error())
	assert.Equal(t, 1, b.Metrics().NumberOfNotPermittedCalls)
}

func TestErrCallNotPermittedSentinel(t *testing.T) {
	assert.True(t, levee.IsRejection(cb.ErrCallNotPermitted), "the bare sentinel is a rejection too")
	assert.True(t, levee.IsRejection(fmt.Errorf("wrapped: %w", &cb.CallNotPermittedError{})))
	assert.False(t, levee.IsRejection(cb.ErrIllegalStateTransition))
	assert.False(t, levee.IsRejection(cb.ErrResultRecordedAsFailure))
	assert.False(t, errors.Is(&cb.CallNotPermittedError{}, cb.ErrIllegalStateTransition))
}

func TestCallerCancellationIsReleasedNotRecorded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, cb.Config{SlidingWindowSize: 10})
		ev := record(b)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		_, err := cb.Execute(ctx, b, func(ctx context.Context) (int, error) {
			<-ctx.Done()
			return 0, fmt.Errorf("dial: %w", ctx.Err())
		})
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, counts{}, countsOf(b.Metrics()))
		assert.Empty(t, ev.types())

		ctx, cancel2 := context.WithTimeout(context.Background(), time.Second)
		defer cancel2()
		_, err = cb.Execute(ctx, b, func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() })
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, counts{}, countsOf(b.Metrics()), "the caller's own deadline is the caller's cancellation")
	})
}

func TestContextErrorNotFromTheCallerIsAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, cb.Config{SlidingWindowSize: 10})
		// the dependency's own timeout: the caller's context is still live
		_, err := cb.Execute(context.Background(), b, func(ctx context.Context) (int, error) {
			inner, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			<-inner.Done()
			return 0, inner.Err()
		})
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, counts{buffered: 1, failed: 1}, countsOf(b.Metrics()))

		// a caller context cancelled, but the call failed for its own reason
		ctx, cancel := context.WithCancel(context.Background())
		_, err = cb.Execute(ctx, b, func(context.Context) (int, error) { cancel(); return 0, errBoom })
		require.ErrorIs(t, err, errBoom)
		assert.Equal(t, counts{buffered: 2, failed: 2}, countsOf(b.Metrics()))
	})
}

// A call that leaves by runtime.Goexit (t.FailNow in a test helper, say) tells nothing about the
// dependency: Execute records nothing and hands its HALF_OPEN permit back, so the next probe is
// admitted.
func TestExecuteGoexitInCallReleasesHalfOpenPermit(t *testing.T) {
	b := mustNew(t, cb.Config{InitialState: cb.HalfOpen, PermittedNumberOfCallsInHalfOpenState: 1})
	r := record(b)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = cb.Execute(context.Background(), b, func(context.Context) (int, error) {
			runtime.Goexit()
			return 0, nil
		})
	}()
	<-done
	assert.Equal(t, []cb.EventType{}, r.types(), "nothing recorded, nothing published")
	assert.Equal(t, counts{}, countsOf(b.Metrics()))
	assert.Equal(t, cb.HalfOpen, b.State())
	require.NoError(t, try(b), "the next probe is admitted")
	assert.ErrorIs(t, try(b), cb.ErrCallNotPermitted, "and the budget is still 1")
}

// A context already done when Execute is called ends the call before it starts: ctx.Err()
// comes back, call never runs, and nothing is recorded or taken, not even a HALF_OPEN permit.
func TestExecuteWithADoneContextRunsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, cb.Config{SlidingWindowSize: 10, PermittedNumberOfCallsInHalfOpenState: 1})
		ev := record(b)
		ran := 0
		call := func(context.Context) (int, error) { ran++; return 1, nil }
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer cancel2()

		_, err := cb.Execute(cancelled, b, call)
		require.ErrorIs(t, err, context.Canceled)
		_, err = cb.Execute(expired, b, call)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Zero(t, ran)
		assert.Equal(t, counts{}, countsOf(b.Metrics()))
		assert.Empty(t, ev.types())

		require.NoError(t, b.TransitionToOpenState())
		require.NoError(t, b.TransitionToHalfOpenState())
		_, err = cb.Execute(cancelled, b, call)
		require.ErrorIs(t, err, context.Canceled)
		v, err := cb.Execute(context.Background(), b, call)
		require.NoError(t, err, "the one HALF_OPEN permit is still there")
		assert.Equal(t, 1, v)
		assert.Equal(t, 1, ran)
	})
}
