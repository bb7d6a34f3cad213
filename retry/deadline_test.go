package retry_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/retry"
)

// By default a retry never sleeps into the caller's deadline: at 0, 1s and 2s the call fails;
// a wait from 2s to 3s would reach the deadline at 2.5s, so the call ends at 2s with the last
// real error, wrapped with the reason.
func TestRetryRespectsCallerDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetry(t, retry.Config{MaxAttempts: 10, WaitDuration: time.Second})
		rec := record(t, r)
		ctx, cancel := context.WithTimeout(context.Background(), 2500*ms)
		defer cancel()
		s := newScript(fail(errGateway))
		start := time.Now()
		_, err := retry.Execute(ctx, r, s.call)
		assert.Equal(t, 2*time.Second, time.Since(start), "no sleep past the deadline")
		assert.Equal(t, 3, s.count())
		require.ErrorIs(t, err, retry.ErrMaxRetriesExceeded)
		require.ErrorIs(t, err, retry.ErrCallerDeadline)
		require.ErrorIs(t, err, errGateway)
		assert.NotErrorIs(t, err, context.DeadlineExceeded)
		var mre *retry.MaxRetriesExceededError
		require.ErrorAs(t, err, &mre)
		assert.Equal(t, 3, mre.Attempts)
		assert.Equal(t, 10, mre.MaxAttempts)
		assert.EqualError(t, err, "retry: Retry 'test' stopped after 3 of 10 attempts "+
			"(the next attempt could not finish before the caller's deadline): gateway 503")
		assert.Equal(t, metrics(0, 0, 0, 1, 3), r.Metrics(), "every attempt counts in the total")
		assert.Equal(t, []retry.EventType{retry.EventRetry, retry.EventRetry, retry.EventError}, rec.types())
	})
}

// MinAttemptDuration keeps a retry from starting an attempt that cannot finish: with 400ms per
// attempt, a retry at 2s (wait 1s from 1s) would leave 500ms, enough; with 600ms it is not.
func TestRetryMinAttemptDuration(t *testing.T) {
	for _, tc := range []struct {
		min      time.Duration
		attempts int
		ended    time.Duration
	}{
		{0, 3, 2 * time.Second},
		{400 * ms, 3, 2 * time.Second},
		{500 * ms, 2, time.Second}, // exactly the time left: it could not finish before
		{600 * ms, 2, time.Second},
		{3 * time.Second, 1, 0},
	} {
		t.Run(tc.min.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRetry(t, retry.Config{MaxAttempts: 10, WaitDuration: time.Second, MinAttemptDuration: tc.min})
				ctx, cancel := context.WithTimeout(context.Background(), 2500*ms)
				defer cancel()
				s := newScript(fail(errGateway))
				start := time.Now()
				_, err := retry.Execute(ctx, r, s.call)
				assert.Equal(t, tc.ended, time.Since(start))
				assert.Equal(t, tc.attempts, s.count())
				require.ErrorIs(t, err, retry.ErrCallerDeadline)
				require.ErrorIs(t, err, errGateway)
			})
		})
	}
}

// A wait ending exactly at the deadline is not made: the attempt after it could not finish.
func TestRetryWaitEndingAtDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: time.Second})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		s := newScript(fail(errGateway))
		_, err := retry.Execute(ctx, r, s.call)
		assert.Equal(t, 1, s.count())
		require.ErrorIs(t, err, retry.ErrCallerDeadline)
	})
}

// A deadline that has passed counts even while ctx.Err() is still nil: the attempt returns
// after the deadline's instant, before the context's timer has fired.
func TestRetryDeadlinePassedBeforeErrIsSet(t *testing.T) {
	r := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
	ctx := deadlineOnly{Context: context.Background(), dl: time.Now().Add(-time.Millisecond)}
	s := newScript(fail(errGateway))
	_, err := retry.Execute(ctx, r, s.call)
	assert.Equal(t, 1, s.count())
	require.ErrorIs(t, err, retry.ErrCallerDeadline)
	require.ErrorIs(t, err, errGateway)
}

// deadlineOnly reports a deadline but never ends: a context an instant before its timer fires.
type deadlineOnly struct {
	context.Context
	dl time.Time
}

func (c deadlineOnly) Deadline() (time.Time, bool) { return c.dl, true }

// A result still matching RetryOnResultPredicate at the deadline is returned as it is.
func TestRetryDeadlineOnResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: time.Second, RetryOnResultPredicate: isPending})
		ctx, cancel := context.WithTimeout(context.Background(), 500*ms)
		defer cancel()
		s := newScript(ok("PENDING"))
		v, err := retry.Execute(ctx, r, s.call)
		require.NoError(t, err)
		assert.Equal(t, "PENDING", v)
		assert.Equal(t, 1, s.count())
		assert.Equal(t, metrics(0, 0, 0, 1, 1), r.Metrics())
	})
	synctest.Test(t, func(t *testing.T) {
		r := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: time.Second, RetryOnResultPredicate: isPending,
			FailAfterMaxAttempts: true})
		ctx, cancel := context.WithTimeout(context.Background(), 500*ms)
		defer cancel()
		_, err := retry.Execute(ctx, r, newScript(ok("PENDING")).call)
		require.ErrorIs(t, err, retry.ErrCallerDeadline)
		var mre *retry.MaxRetriesExceededError
		require.ErrorAs(t, err, &mre)
		assert.Equal(t, "PENDING", mre.LastResult)
	})
}

// The Context driven by hand knows the deadline once told with SetCallerContext.
func TestContextSetCallerContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: time.Second})
		ctx, cancel := context.WithTimeout(context.Background(), 500*ms)
		defer cancel()
		c := r.NewContext()
		wait, again := c.OnError(errGateway)
		assert.True(t, again, "no caller context: no deadline")
		assert.Equal(t, time.Second, wait)

		c = r.NewContext()
		c.SetCallerContext(ctx)
		wait, again = c.OnError(errGateway)
		assert.False(t, again)
		assert.Zero(t, wait)
		require.ErrorIs(t, c.Err(), retry.ErrCallerDeadline)
	})
}

func TestMinAttemptDurationValidated(t *testing.T) {
	_, err := retry.New("test", retry.Config{MinAttemptDuration: -time.Second})
	assert.EqualError(t, err, "retry: MinAttemptDuration must be >= 0, got -1s")
}

// NoRetryOfRetries: a call serving any attempt of a caller that retries (the first included)
// makes one attempt; one knowing no attempt, or without the option, retries as usual.
func TestNoRetryOfRetries(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ctx      context.Context
		option   bool
		attempts int
	}{
		{"first attempt", retry.WithIncomingAttempt(context.Background(), 1), true, 1},
		{"first attempt, option off", retry.WithIncomingAttempt(context.Background(), 1), false, 3},
		{"attempt unknown", retry.WithIncomingAttempt(context.Background(), -1), true, 3},
		{"no attempt known", context.Background(), true, 3},
		{"a retry", retry.WithIncomingAttempt(context.Background(), 2), true, 1},
		{"a retry, option off", retry.WithIncomingAttempt(context.Background(), 2), false, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait, NoRetryOfRetries: tc.option})
			s := newScript(fail(errGateway))
			_, err := retry.Execute(tc.ctx, r, s.call)
			assert.Equal(t, tc.attempts, s.count())
			require.ErrorIs(t, err, errGateway)
			require.ErrorIs(t, err, retry.ErrMaxRetriesExceeded)
			assert.Equal(t, tc.attempts == 1, errors.Is(err, retry.ErrServingRetry))
		})
	}
}

func TestIncomingAttempt(t *testing.T) {
	assert.Equal(t, 0, retry.IncomingAttempt(context.Background()))
	assert.Equal(t, 0, retry.IncomingAttempt(nil)) //nolint:staticcheck // a nil ctx is allowed
	assert.Equal(t, 3, retry.IncomingAttempt(retry.WithIncomingAttempt(context.Background(), 3)))
	assert.Equal(t, 0, retry.IncomingAttempt(retry.WithIncomingAttempt(context.Background(), -2)))
	assert.False(t, retry.CallerRetries(context.Background()))
	assert.False(t, retry.CallerRetries(nil)) //nolint:staticcheck // a nil ctx is allowed
	assert.False(t, retry.CallerRetries(retry.WithIncomingAttempt(context.Background(), 0)))
	assert.True(t, retry.CallerRetries(retry.WithIncomingAttempt(context.Background(), 1)))
	assert.True(t, retry.CallerRetries(retry.WithIncomingAttempt(context.Background(), 3)))
}

// ExecuteExpecting: an attempt expected to take 600ms is not started with 500ms left.
func TestExecuteExpecting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetry(t, retry.Config{MaxAttempts: 10, WaitDuration: time.Second, MinAttemptDuration: 100 * ms})
		ctx, cancel := context.WithTimeout(context.Background(), 2500*ms)
		defer cancel()
		s := newScript(fail(errGateway))
		start := time.Now()
		_, err := retry.ExecuteExpecting(ctx, r, 600*ms, s.call)
		assert.Equal(t, time.Second, time.Since(start))
		assert.Equal(t, 2, s.count())
		require.ErrorIs(t, err, retry.ErrCallerDeadline)
	})
}
