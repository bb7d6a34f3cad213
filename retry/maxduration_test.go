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

// timedCall fails with errGateway after taking d, and records when each attempt started.
func timedCall(start time.Time, d time.Duration, at *[]time.Duration) func(context.Context) (string, error) {
	return func(context.Context) (string, error) {
		*at = append(*at, time.Since(start))
		time.Sleep(d)
		return "", errGateway
	}
}

func TestMaxDurationStopsBeforeAWaitEndingLater(t *testing.T) {
	tests := []struct {
		name        string
		maxDuration time.Duration
		took        time.Duration // each attempt's duration
		wantAt      []time.Duration
		wantEnd     time.Duration
	}{
		// Waits of 1s: the wait after the attempt at 2s would end at 3s > 2.5s.
		{"stops between two retries", 2500 * ms, 0, []time.Duration{0, time.Second, 2 * time.Second}, 2 * time.Second},
		{"a wait ending exactly at the limit is made", 2 * time.Second, 0, []time.Duration{0, time.Second, 2 * time.Second}, 2 * time.Second},
		{"one nanosecond less stops a retry earlier", 2*time.Second - 1, 0, []time.Duration{0, time.Second}, time.Second},
		// Attempts of 700ms: 0–0.7s, wait to 1.7s, 1.7–2.4s; a wait to 3.4s > 3s is not made.
		{"attempts count in the duration", 3 * time.Second, 700 * ms, []time.Duration{0, 1700 * ms}, 2400 * ms},
		{"an attempt that ends past the limit stops the call", time.Second, 1500 * ms, []time.Duration{0}, 1500 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRetry(t, retry.Config{MaxAttempts: 10, WaitDuration: time.Second, MaxDuration: tt.maxDuration})
				rec := record(t, r)
				start := time.Now()
				var at []time.Duration
				_, err := retry.Execute(context.Background(), r, timedCall(start, tt.took, &at))

				assert.Equal(t, tt.wantAt, at)
				assert.Equal(t, tt.wantEnd, time.Since(start), "no wait after the last attempt")
				var mre *retry.MaxRetriesExceededError
				require.ErrorAs(t, err, &mre)
				assert.Equal(t, retry.MaxRetriesExceededError{Name: "test", Attempts: len(tt.wantAt), MaxAttempts: 10,
					LastErr: errGateway, Reason: retry.ErrMaxDurationExceeded}, *mre)
				assert.ErrorIs(t, err, retry.ErrMaxDurationExceeded)
				assert.ErrorIs(t, err, retry.ErrMaxRetriesExceeded)
				assert.ErrorIs(t, err, errGateway)
				assert.NotErrorIs(t, err, retry.ErrBudgetExhausted)
				assert.Equal(t, metrics(0, 0, 0, 1, int64(len(tt.wantAt))), r.Metrics())
				events := rec.all()
				require.Len(t, events, len(tt.wantAt))
				last := events[len(events)-1]
				assert.Equal(t, retry.EventError, last.Type)
				assert.True(t, last.LastErr == err, "the event carries the ending error, Reason included")
			})
		})
	}
}

func TestMaxDurationMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetry(t, retry.Config{MaxAttempts: 10, WaitDuration: time.Second, MaxDuration: 2500 * ms})
		_, err := retry.Execute(context.Background(), r, newScript(fail(errGateway)).call)
		assert.EqualError(t, err, "retry: Retry 'test' stopped after 3 of 10 attempts (max duration exceeded): gateway 503")
	})
}

func TestMaxDurationLeavesMaxAttemptsAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: time.Second, MaxDuration: time.Hour})
		start := time.Now()
		_, err := retry.Execute(context.Background(), r, newScript(fail(errGateway)).call)
		var mre *retry.MaxRetriesExceededError
		require.ErrorAs(t, err, &mre)
		assert.Nil(t, mre.Reason)
		assert.NotErrorIs(t, err, retry.ErrMaxDurationExceeded)
		assert.EqualError(t, err, "retry: Retry 'test' has exhausted all attempts (3): gateway 503")
		assert.Equal(t, 2*time.Second, time.Since(start))
	})
}

func TestMaxDurationWithIntervalFunction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		backoff, err := retry.ExponentialBackoff(100*ms, 2, 0)
		require.NoError(t, err)
		// Waits 100, 200, 400, 800ms: attempts at 0, 100, 300, 700ms; the next would start at 1.5s.
		r := newRetry(t, retry.Config{MaxAttempts: 10, IntervalFunction: backoff, MaxDuration: time.Second})
		start := time.Now()
		var at []time.Duration
		_, err = retry.Execute(context.Background(), r, timedCall(start, 0, &at))
		require.ErrorIs(t, err, retry.ErrMaxDurationExceeded)
		assert.Equal(t, []time.Duration{0, 100 * ms, 300 * ms, 700 * ms}, at)
	})
}

func TestMaxDurationOnResults(t *testing.T) {
	for _, failAfter := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			r := newRetry(t, retry.Config{MaxAttempts: 10, WaitDuration: time.Second, MaxDuration: 1500 * ms,
				RetryOnResultPredicate: isPending, FailAfterMaxAttempts: failAfter})
			rec := record(t, r)
			s := newScript(ok("PENDING"))
			start := time.Now()
			v, err := retry.Execute(context.Background(), r, s.call)
			events := rec.all()
			require.Len(t, events, 2)
			assert.Equal(t, retry.EventError, events[1].Type)
			assert.ErrorIs(t, events[1].LastErr, retry.ErrMaxDurationExceeded, "the event says why")
			assert.Equal(t, "PENDING", v)
			assert.Equal(t, 2, s.count())
			assert.Equal(t, time.Second, time.Since(start))
			assert.Equal(t, metrics(0, 0, 0, 1, 2), r.Metrics())
			if !failAfter {
				assert.NoError(t, err, "the result is returned as it is")
				return
			}
			var mre *retry.MaxRetriesExceededError
			require.ErrorAs(t, err, &mre)
			assert.Equal(t, retry.MaxRetriesExceededError{Name: "test", Attempts: 2, MaxAttempts: 10,
				LastResult: "PENDING", Reason: retry.ErrMaxDurationExceeded}, *mre)
		})
	}
}

// TestMaxDurationFromNewContext: a Context driven by hand measures from NewContext.
func TestMaxDurationFromNewContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetry(t, retry.Config{MaxAttempts: 10, WaitDuration: time.Second, MaxDuration: 3 * time.Second})
		c := r.NewContext()
		time.Sleep(1500 * ms) // the first attempt, say
		wait, again := c.OnError(errGateway)
		assert.True(t, again)
		assert.Equal(t, time.Second, wait)
		time.Sleep(wait)
		wait, again = c.OnError(errGateway) // at 2.5s: a wait to 3.5s passes the limit
		assert.False(t, again)
		assert.Zero(t, wait)
		assert.ErrorIs(t, c.Err(), retry.ErrMaxDurationExceeded)
		assert.Equal(t, 2, c.Attempts())
	})
}

// TestMaxDurationLeavesCancellationAlone: a context ending a wait ends the call as before.
func TestMaxDurationLeavesCancellationAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetry(t, retry.Config{MaxAttempts: 10, WaitDuration: time.Second, MaxDuration: time.Hour,
			IgnoreCallerDeadline: true})
		ctx, cancel := context.WithTimeout(context.Background(), 1500*ms)
		defer cancel()
		_, err := retry.Execute(ctx, r, newScript(fail(errGateway)).call)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.ErrorIs(t, err, errGateway)
		assert.False(t, errors.Is(err, retry.ErrMaxDurationExceeded))
	})
}
