package retry_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/retry"
)

// TestHowARetryEnds has one row per way a call ends, in the order of Execute's doc: the value
// and error returned, the attempts made, the time waited and the outcome counted.
func TestHowARetryEnds(t *testing.T) {
	negative := func(int) time.Duration { return -1 }
	tenMs := func(cfg retry.Config) retry.Config { cfg.WaitDuration = 10 * ms; return cfg }
	pending := retry.Config{MaxAttempts: 3, RetryOnResultPredicate: isPending}
	failAfter := pending
	failAfter.FailAfterMaxAttempts = true
	pendingNegative := pending
	pendingNegative.IntervalFunction = negative
	failAfterNegative := failAfter
	failAfterNegative.IntervalFunction = negative

	// exhausted returns the expected *MaxRetriesExceededError.
	exhausted := func(attempts, maxAttempts int, result any, err error) error {
		return &retry.MaxRetriesExceededError{Name: "test", Attempts: attempts, MaxAttempts: maxAttempts, LastResult: result, LastErr: err}
	}
	tests := []struct {
		name    string
		cfg     retry.Config
		call    *script
		value   string
		err     error // compared with assert.Equal (a *MaxRetriesExceededError by value)
		msg     string
		calls   int
		elapsed time.Duration
		m       retry.Metrics
	}{
		{"success on the first attempt", tenMs(retry.Config{}), newScript(ok("PAID")),
			"PAID", nil, "", 1, 0, metrics(1, 0, 0, 0, 1)},
		{"success after a retry", tenMs(retry.Config{}), newScript(fail(errGateway), ok("PAID")),
			"PAID", nil, "", 2, 10 * ms, metrics(0, 1, 0, 0, 2)},
		{"error not retried, returned as it is", tenMs(retry.Config{IgnoreErrors: []error{errInvalid}}),
			newScript(fail(errGateway), outcome{"partial", errInvalid}),
			"partial", errInvalid, "invalid order", 2, 10 * ms, metrics(0, 0, 1, 0, 2)},
		{"rejection not listed, returned as it is", tenMs(retry.Config{RetryOnErrorPredicate: func(error) bool { return true }}),
			newScript(fail(errGateway), fail(errRejected)),
			"", errRejected, "breaker: call not permitted", 2, 10 * ms, metrics(0, 0, 1, 0, 2)},
		{"attempts exhausted on errors", tenMs(retry.Config{}), newScript(fail(errInvalid), fail(errGateway)),
			"", exhausted(3, 3, nil, errGateway), "retry: Retry 'test' has exhausted all attempts (3): gateway 503",
			3, 20 * ms, metrics(0, 0, 0, 1, 3)},
		{"negative interval on an error, as exhaustion", retry.Config{MaxAttempts: 3, IntervalFunction: negative},
			newScript(fail(errGateway)),
			"", exhausted(1, 3, nil, errGateway), "retry: Retry 'test' stopped after 1 of 3 attempts: gateway 503",
			1, 0, metrics(0, 0, 0, 1, 1)},
		{"attempts exhausted on results: the last result", tenMs(pending), newScript(ok("PENDING-1"), ok("PENDING-2"), ok("PENDING-3")),
			"PENDING-3", nil, "", 3, 20 * ms, metrics(0, 0, 0, 1, 3)},
		{"negative interval on a result: the result", pendingNegative, newScript(ok("PENDING-1")),
			"PENDING-1", nil, "", 1, 0, metrics(0, 0, 0, 1, 1)},
		{"attempts exhausted on results with FailAfterMaxAttempts", tenMs(failAfter),
			newScript(fail(errGateway), ok("PENDING-2"), ok("PENDING-3")),
			"PENDING-3", exhausted(3, 3, "PENDING-3", errGateway), "retry: Retry 'test' has exhausted all attempts (3): gateway 503",
			3, 20 * ms, metrics(0, 0, 0, 1, 3)},
		{"negative interval on a result with FailAfterMaxAttempts", failAfterNegative, newScript(ok("PENDING-1")),
			"PENDING-1", exhausted(1, 3, "PENDING-1", nil), "retry: Retry 'test' stopped after 1 of 3 attempts",
			1, 0, metrics(0, 0, 0, 1, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRetry(t, tt.cfg)
				start := time.Now()
				v, err := retry.Execute(context.Background(), r, tt.call.call)
				assert.Equal(t, tt.value, v)
				if tt.err == nil {
					require.NoError(t, err)
				} else {
					assert.Equal(t, tt.err, err)
					assert.EqualError(t, err, tt.msg)
				}
				assert.Equal(t, tt.calls, tt.call.count())
				assert.Equal(t, tt.elapsed, time.Since(start))
				assert.Equal(t, tt.m, r.Metrics())
			})
		})
	}
}

// TestHowARetryEndsOnCancellation covers the two ways the caller's cancellation ends a call:
// during a wait, and returned by an attempt.
func TestHowARetryEndsOnCancellation(t *testing.T) {
	t.Run("during a wait: ctx.Err() and the last error", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: 10 * ms})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			time.AfterFunc(15*ms, cancel) // 5ms into the second wait
			s := newScript(fail(errInvalid), fail(errGateway))
			start := time.Now()
			_, err := retry.Execute(ctx, r, s.call)
			assert.EqualError(t, err, "retry: Retry 'test' stopped waiting for attempt 3: context canceled; last error: gateway 503")
			assert.ErrorIs(t, err, context.Canceled)
			assert.ErrorIs(t, err, errGateway)
			assert.NotErrorIs(t, err, errInvalid, "only the last error")
			assert.NotErrorIs(t, err, retry.ErrMaxRetriesExceeded)
			assert.Equal(t, 15*ms, time.Since(start))
			assert.Equal(t, 2, s.count())
			assert.Equal(t, metrics(0, 0, 0, 0, 2), r.Metrics(), "no outcome counted")
		})
	})
	t.Run("returned by an attempt: as it is", func(t *testing.T) {
		r := newRetry(t, noWait(3))
		ctx, cancel := context.WithCancel(context.Background())
		_, err := retry.Execute(ctx, r, func(ctx context.Context) (string, error) {
			cancel()
			return "", ctx.Err()
		})
		assert.Same(t, context.Canceled, err)
		assert.Equal(t, retry.Metrics{}, r.Metrics())
	})
}

// TestHowARetryEndsOnAPanickingHook: a config hook's panic ends the call with a
// *levee.PanicError that wraps the attempt's error.
func TestHowARetryEndsOnAPanickingHook(t *testing.T) {
	r := newRetry(t, retry.Config{MaxAttempts: 3, IntervalFunction: func(int) time.Duration { panic("bad interval") }})
	_, err := retry.Execute(context.Background(), r, newScript(fail(errGateway)).call)
	var pe *levee.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "bad interval", pe.Value)
	assert.ErrorIs(t, err, errGateway)
	assert.False(t, errors.Is(err, retry.ErrMaxRetriesExceeded))
	assert.Equal(t, metrics(0, 0, 0, 1, 1), r.Metrics())
}
