package throttle_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/throttle"
)

type statusError struct{ code int }

func (e *statusError) Error() string { return "status" }

// TestRecordErrorsTypeMarkerMatches: an entry made by levee.ErrorType matches every error of
// its type, as in every other pattern's error list.
func TestRecordErrorsTypeMarkerMatches(t *testing.T) {
	th := newThrottler(t, throttle.Config{RecordErrors: []error{levee.ErrorType[*statusError]()}})
	_, err := throttle.Execute(context.Background(), th, func(context.Context) (int, error) {
		return 0, &statusError{code: 503}
	})
	require.Error(t, err)
	m := th.Metrics()
	assert.Equal(t, uint64(1), m.Requests)
	assert.Equal(t, uint64(0), m.Accepts, "a *statusError is listed by type: the backend rejected it")
}

// TestRecordErrorsRefusesEntriesThatCannotMatch: a levee rejection never counts, so listing
// one could never match; nor could a typed nil. New refuses both, naming the field.
func TestRecordErrorsRefusesEntriesThatCannotMatch(t *testing.T) {
	_, err := throttle.New("x", throttle.Config{RecordErrors: []error{bulkhead.ErrBulkheadFull}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "throttle: RecordErrors[0] must not be a levee rejection")

	_, err = throttle.New("x", throttle.Config{RecordErrors: []error{(*statusError)(nil)}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "throttle: RecordErrors[0] is a nil *throttle_test.statusError")

	_, err = throttle.New("x", throttle.Config{RecordErrors: []error{nil}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "throttle: RecordErrors[0] is nil")
}

// pastDeadline is a context whose deadline has passed but whose Err is not set yet, as a
// context is for an instant after its deadline (a call's own timer may fire first).
type pastDeadline struct{ context.Context }

func (pastDeadline) Deadline() (time.Time, bool) { return time.Now().Add(-time.Millisecond), true }

// TestExecuteCallerDeadlineBeforeErrIsSetCountsNothing: an error matching
// context.DeadlineExceeded once the caller's deadline has passed counts nothing, even before
// ctx.Err() is set, as Execute's doc says; before the deadline it is a backend rejection.
func TestExecuteCallerDeadlineBeforeErrIsSetCountsNothing(t *testing.T) {
	th := newThrottler(t, throttle.Config{})
	deadlineErr := fmt.Errorf("rpc error: code = DeadlineExceeded: %w", context.DeadlineExceeded)
	call := func(context.Context) (int, error) { return 0, deadlineErr }

	_, err := throttle.Execute(pastDeadline{context.Background()}, th, call)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, uint64(0), th.Metrics().Requests, "the caller's deadline is not a request the backend answered")

	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	_, err = throttle.Execute(ctx, th, call)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	m := th.Metrics()
	assert.Equal(t, uint64(1), m.Requests)
	assert.Equal(t, uint64(0), m.Accepts)
}

// TestRandomPanicFailsTheCall: a Random that panics (user code) fails the call with a
// *levee.PanicError instead of unwinding through Acquire and Execute.
func TestRandomPanicFailsTheCall(t *testing.T) {
	broken := false
	th := newThrottler(t, throttle.Config{Random: func() float64 {
		if broken {
			panic("broken source")
		}
		return 0.99999
	}})
	// Shedding starts only once the backend rejects: make the probability positive.
	for range 10 {
		p, err := th.Acquire()
		require.NoError(t, err)
		p.OnError(errOverloaded)
	}
	require.Positive(t, th.RejectionProbability())
	broken = true

	var err error
	require.NotPanics(t, func() { _, err = th.Acquire() })
	var pe *levee.PanicError
	require.ErrorAs(t, err, &pe)

	called := false
	require.NotPanics(t, func() {
		_, err = throttle.Execute(context.Background(), th, func(context.Context) (int, error) { called = true; return 1, nil })
	})
	require.ErrorAs(t, err, &pe)
	assert.False(t, called)
	assert.Equal(t, uint64(10), th.Metrics().Requests, "the failed draws sent nothing")
}
