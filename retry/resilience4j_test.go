package retry_test

// Tests named after the points of Resilience4j's Retry that reimplementations most often get
// wrong, and after the cases users hit in other libraries.

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/retry"
)

func TestPitfall9_MaxAttemptsIncludesTheFirstCall(t *testing.T) {
	for _, maxAttempts := range []int{1, 2, 3, 7} {
		r := newRetry(t, noWait(maxAttempts))
		s := newScript(fail(errGateway))
		_, err := retry.Execute(context.Background(), r, s.call)
		require.ErrorIs(t, err, errGateway)
		assert.Equal(t, maxAttempts, s.count(), "MaxAttempts %d", maxAttempts)
	}
	// The default, 3, means at most 2 retries.
	synctest.Test(t, func(t *testing.T) {
		r := newRetry(t, retry.Config{})
		s := newScript(fail(errGateway))
		_, _ = retry.Execute(context.Background(), r, s.call)
		assert.Equal(t, 3, s.count())
	})
}

func TestPitfall9_SuccessEventOnlyAfterAtLeastOneRetry(t *testing.T) {
	r := newRetry(t, noWait(3))
	rec := record(t, r)
	_, err := retry.Execute(context.Background(), r, newScript(ok("PAID")).call)
	require.NoError(t, err)
	assert.Empty(t, rec.types(), "first-try success: no event")
	_, err = retry.Execute(context.Background(), r, newScript(fail(errGateway), ok("PAID")).call)
	require.NoError(t, err)
	assert.Equal(t, []retry.EventType{retry.EventRetry, retry.EventSuccess}, rec.types())
	assert.Equal(t, metrics(1, 1, 0, 0, 3), r.Metrics())
}

func TestPitfall9_IgnoringBeatsRetrying(t *testing.T) {
	// The error matches RetryErrors (by type), RetryOnErrorPredicate and IgnoreErrors at once.
	both := &httpError{Status: 422}
	r := newRetry(t, retry.Config{
		WaitDuration:          retry.NoWait,
		RetryErrors:           []error{both},
		RetryOnErrorPredicate: func(error) bool { return true },
		IgnoreErrors:          []error{both},
	})
	s := newScript(fail(both))
	_, err := retry.Execute(context.Background(), r, s.call)
	assert.Same(t, both, err)
	assert.Equal(t, 1, s.count())
	assert.Equal(t, metrics(0, 0, 1, 0, 1), r.Metrics())
}

func TestPitfall9_ResultExhaustionReturnsLastResultUnlessFailAfterMaxAttempts(t *testing.T) {
	for _, failAfter := range []bool{false, true} {
		cfg := resultConfig(2)
		cfg.FailAfterMaxAttempts = failAfter
		r := newRetry(t, cfg)
		v, err := retry.Execute(context.Background(), r, newScript(ok("PENDING-1"), ok("PENDING-2")).call)
		assert.Equal(t, "PENDING-2", v)
		if failAfter {
			require.ErrorIs(t, err, retry.ErrMaxRetriesExceeded)
		} else {
			require.NoError(t, err)
		}
		assert.Equal(t, metrics(0, 0, 0, 1, 2), r.Metrics())
	}
}

// TestOutcomeCountedExactlyOnce: whichever way a call ends, exactly one outcome counter moves
// — none when the caller cancelled it.
func TestOutcomeCountedExactlyOnce(t *testing.T) {
	negative := func(int) time.Duration { return -1 }
	tests := []struct {
		name   string
		cfg    retry.Config
		call   *script
		cancel bool // the caller cancels during the first wait
		want   retry.Metrics
	}{
		{"first-try success", noWait(3), newScript(ok("x")), false, metrics(1, 0, 0, 0, 1)},
		{"success after retry", noWait(3), newScript(fail(errGateway), ok("x")), false, metrics(0, 1, 0, 0, 2)},
		{"exhausted", noWait(3), newScript(fail(errGateway)), false, metrics(0, 0, 0, 1, 3)},
		{"not retried", noWait(3), newScript(fail(errRejected)), false, metrics(0, 0, 1, 0, 1)},
		{"stopped by a negative interval", retry.Config{IntervalFunction: negative}, newScript(fail(errGateway)), false, metrics(0, 0, 0, 1, 1)},
		{"result exhausted", resultConfig(3), newScript(ok("PENDING")), false, metrics(0, 0, 0, 1, 3)},
		{"result accepted after retry", resultConfig(3), newScript(ok("PENDING"), ok("x")), false, metrics(0, 1, 0, 0, 2)},
		{"panicking hook", retry.Config{RetryOnErrorPredicate: func(error) bool { panic("p") }}, newScript(fail(errGateway)), false, metrics(0, 0, 1, 0, 1)},
		{"cancelled while waiting", retry.Config{WaitDuration: time.Hour}, newScript(fail(errGateway)), true, metrics(0, 0, 0, 0, 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRetry(t, tt.cfg)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if tt.cancel {
					go func() {
						time.Sleep(time.Minute)
						cancel()
					}()
				}
				_, _ = retry.Execute(ctx, r, tt.call.call)
				assert.Equal(t, tt.want, r.Metrics())
			})
		})
	}
}
