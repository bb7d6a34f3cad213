package retry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/internal/safe"
	"github.com/levee-go/levee/retry"
)

func TestContextDrivenByHand(t *testing.T) {
	backoff, err := retry.ExponentialBackoff(100*ms, 2, 0)
	require.NoError(t, err)
	r := newRetry(t, retry.Config{MaxAttempts: 4, IntervalFunction: backoff})

	c := r.NewContext()
	assert.Equal(t, 0, c.Attempts())
	wait, again := c.OnError(errGateway)
	assert.Equal(t, 100*ms, wait)
	assert.True(t, again)
	assert.Equal(t, 1, c.Attempts())
	wait, again = c.OnError(errGateway)
	assert.Equal(t, 200*ms, wait)
	assert.True(t, again)
	assert.Equal(t, 2, c.Attempts())
	wait, again = c.OnResult("PAID") // no result predicate: accepted at once
	assert.Zero(t, wait)
	assert.False(t, again)
	c.OnSuccess()
	assert.NoError(t, c.Err())
	assert.Equal(t, metrics(0, 1, 0, 0, 3), r.Metrics())
}

func TestContextExhaustion(t *testing.T) {
	r := newRetry(t, noWait(2))
	c := r.NewContext()
	_, again := c.OnError(errGateway)
	require.True(t, again)
	require.NoError(t, c.Err(), "no error while running")
	_, again = c.OnError(errInvalid)
	require.False(t, again)
	var mre *retry.MaxRetriesExceededError
	require.ErrorAs(t, c.Err(), &mre)
	assert.Equal(t, retry.MaxRetriesExceededError{Name: "test", Attempts: 2, MaxAttempts: 2, LastErr: errInvalid}, *mre)
	assert.Equal(t, 2, c.Attempts())
}

func TestContextCountsAnOutcomeOnce(t *testing.T) {
	r := newRetry(t, noWait(2))
	rec := record(t, r)
	c := r.NewContext()
	_, again := c.OnError(errInvalid)
	require.True(t, again)
	_, again = c.OnError(errGateway)
	require.False(t, again)
	stopped := c.Err()

	// Everything after the call stopped is ignored.
	_, again = c.OnError(errGateway)
	assert.False(t, again)
	_, again = c.OnResult("x")
	assert.False(t, again)
	c.OnSuccess()
	c.OnSuccess()
	assert.Same(t, stopped, c.Err())
	assert.Equal(t, metrics(0, 0, 0, 1, 2), r.Metrics())
	assert.Len(t, rec.all(), 2)

	s := r.NewContext()
	s.OnSuccess()
	s.OnSuccess()
	assert.Equal(t, metrics(1, 0, 0, 1, 3), r.Metrics())
}

func TestContextOnErrorNilRecordsNothing(t *testing.T) {
	r := newRetry(t, noWait(3))
	c := r.NewContext()
	wait, again := c.OnError(nil)
	assert.Zero(t, wait)
	assert.False(t, again)
	assert.Equal(t, retry.Metrics{}, r.Metrics())
	c.OnSuccess() // the context is still usable
	assert.Equal(t, metrics(1, 0, 0, 0, 1), r.Metrics())
}

func TestZeroContextDoesNothing(t *testing.T) {
	var c retry.Context
	wait, again := c.OnError(errGateway)
	assert.Zero(t, wait)
	assert.False(t, again)
	wait, again = c.OnResult("x")
	assert.Zero(t, wait)
	assert.False(t, again)
	c.OnSuccess()
	assert.NoError(t, c.Err())
	assert.Zero(t, c.Attempts())
}

func TestContextsAreIndependent(t *testing.T) {
	r := newRetry(t, noWait(2))
	a, b := r.NewContext(), r.NewContext()
	_, again := a.OnError(errGateway)
	require.True(t, again)
	_, again = b.OnError(errGateway)
	require.True(t, again, "b has its own attempt count")
	assert.Equal(t, 1, a.Attempts())
	assert.Equal(t, 1, b.Attempts())
}

func TestHookPanicsEndTheCall(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name       string
		cfg        retry.Config
		call       *script
		calls      int
		m          retry.Metrics
		wrapsCause bool // the call's own error is still in the chain
	}{
		{"error predicate", retry.Config{RetryOnErrorPredicate: func(error) bool { panic(boom) }},
			newScript(fail(errGateway)), 1, metrics(0, 0, 1, 0, 1), true},
		{"interval function", retry.Config{IntervalFunction: func(int) time.Duration { panic(boom) }},
			newScript(fail(errGateway)), 1, metrics(0, 0, 0, 1, 1), true},
		{"interval bi-function after a result", retry.Config{
			IntervalBiFunction:     func(int, error, any) time.Duration { panic(boom) },
			RetryOnResultPredicate: isPending,
		}, newScript(ok("PENDING")), 1, metrics(0, 0, 0, 1, 1), false},
		{"result predicate", retry.Config{RetryOnResultPredicate: func(any) bool { panic(boom) }},
			newScript(ok("PAID")), 1, metrics(0, 0, 1, 0, 1), false},
		{"consume result", retry.Config{
			RetryOnResultPredicate:          isPending,
			ConsumeResultBeforeRetryAttempt: func(int, any) { panic(boom) },
		}, newScript(ok("PENDING")), 1, metrics(0, 0, 0, 1, 1), false},
		{"result predicate after a retried error", retry.Config{
			WaitDuration:           retry.NoWait,
			RetryOnResultPredicate: func(any) bool { panic(boom) },
		}, newScript(fail(errGateway), ok("PAID")), 2, metrics(0, 0, 0, 1, 2), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRetry(t, tt.cfg)
			rec := record(t, r)
			_, err := retry.Execute(context.Background(), r, tt.call.call)
			var pe *safe.PanicError
			require.ErrorAs(t, err, &pe)
			assert.ErrorIs(t, err, boom)
			if tt.wrapsCause {
				assert.ErrorIs(t, err, errGateway)
			}
			assert.Equal(t, tt.calls, tt.call.count())
			assert.Equal(t, tt.m, r.Metrics())
			got := rec.all()
			require.NotEmpty(t, got)
			last := got[len(got)-1]
			assert.Equal(t, retry.EventError, last.Type)
			assert.Same(t, err, last.LastErr)
		})
	}
}

func TestExecuteRefusesNilArguments(t *testing.T) {
	r := newRetry(t, noWait(3))
	_, err := retry.Execute[int](context.Background(), r, nil)
	assert.Same(t, safe.ErrNilCall, err)
	_, err = retry.Execute(context.Background(), nil, newScript(ok("x")).call)
	assert.Same(t, retry.ErrNilRetry, err)
	assert.Equal(t, retry.Metrics{}, r.Metrics())
}

func TestExecuteTreatsNilContextAsBackground(t *testing.T) {
	r := newRetry(t, noWait(3))
	var got context.Context
	v, err := retry.Execute(nil, r, func(ctx context.Context) (string, error) {
		got = ctx
		return "PAID", nil
	})
	require.NoError(t, err)
	assert.Equal(t, "PAID", v)
	assert.Equal(t, context.Background(), got)
}
