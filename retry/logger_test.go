package retry_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/internal/logging/logtest"
	"github.com/levee-go/levee/retry"
)

func retryAttrs(event string, more map[string]any) map[string]any {
	m := map[string]any{"pattern": "retry", "name": "payment", "event": event}
	for k, v := range more {
		m[k] = v
	}
	return m
}

func TestLoggerLogsRetriesAndExhaustion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, logger := logtest.New(slog.LevelDebug)
		r, err := retry.New("payment", retry.Config{MaxAttempts: 3, WaitDuration: 100 * ms, Logger: logger})
		require.NoError(t, err)

		start := time.Now()
		_, err = retry.Execute(context.Background(), r, newScript(fail(errGateway), fail(errGateway), fail(errGateway)).call)
		require.ErrorIs(t, err, retry.ErrMaxRetriesExceeded)
		assert.Equal(t, 200*ms, time.Since(start))
		assert.Equal(t, []logtest.Record{
			{Level: slog.LevelDebug, Msg: "retry attempt failed",
				Attrs: retryAttrs("RETRY", map[string]any{"attempt": int64(1), "wait": 100 * ms, "err": errGateway})},
			{Level: slog.LevelDebug, Msg: "retry attempt failed",
				Attrs: retryAttrs("RETRY", map[string]any{"attempt": int64(2), "wait": 100 * ms, "err": errGateway})},
			{Level: slog.LevelInfo, Msg: "retries exhausted",
				Attrs: retryAttrs("ERROR", map[string]any{"attempt": int64(3), "err": errGateway})},
		}, h.Records())
	})
}

func TestLoggerLogsSuccessAfterRetriesOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, logger := logtest.New(slog.LevelDebug)
		r, err := retry.New("payment", retry.Config{MaxAttempts: 3, WaitDuration: 100 * ms,
			IgnoreErrors: []error{errInvalid}, Logger: logger})
		require.NoError(t, err)

		_, err = retry.Execute(context.Background(), r, newScript(ok("PAID")).call)
		require.NoError(t, err)
		_, err = retry.Execute(context.Background(), r, newScript(fail(errInvalid)).call)
		require.ErrorIs(t, err, errInvalid)
		assert.Empty(t, h.Records(), "a first-attempt success and an ignored error are not logged")

		_, err = retry.Execute(context.Background(), r, newScript(fail(errGateway), ok("PAID")).call)
		require.NoError(t, err)
		assert.Equal(t, []logtest.Record{
			{Level: slog.LevelDebug, Msg: "retry attempt failed",
				Attrs: retryAttrs("RETRY", map[string]any{"attempt": int64(1), "wait": 100 * ms, "err": errGateway})},
			{Level: slog.LevelDebug, Msg: "retry succeeded after retries",
				Attrs: retryAttrs("SUCCESS", map[string]any{"attempt": int64(1)})},
		}, h.Records())
	})
}

func TestLoggerRetryOnResultHasNoErr(t *testing.T) {
	h, logger := logtest.New(slog.LevelDebug)
	r, err := retry.New("payment", retry.Config{MaxAttempts: 2, WaitDuration: retry.NoWait, Logger: logger,
		RetryOnResultPredicate: func(v any) bool { return v == "PENDING" }})
	require.NoError(t, err)
	v, err := retry.Execute(context.Background(), r, newScript(ok("PENDING"), ok("PAID")).call)
	require.NoError(t, err)
	require.Equal(t, "PAID", v)
	assert.Equal(t, []logtest.Record{
		{Level: slog.LevelDebug, Msg: "retry attempt failed",
			Attrs: retryAttrs("RETRY", map[string]any{"attempt": int64(1), "wait": time.Duration(0)})},
		{Level: slog.LevelDebug, Msg: "retry succeeded after retries",
			Attrs: retryAttrs("SUCCESS", map[string]any{"attempt": int64(1)})},
	}, h.Records(), "no result is logged")
}

func TestLoggerAtInfoLogsOnlyExhaustion(t *testing.T) {
	h, logger := logtest.New(slog.LevelInfo)
	r, err := retry.New("payment", retry.Config{MaxAttempts: 2, WaitDuration: retry.NoWait, Logger: logger})
	require.NoError(t, err)
	_, err = retry.Execute(context.Background(), r, newScript(fail(errGateway)).call)
	require.True(t, errors.Is(err, errGateway))
	assert.Equal(t, []logtest.Record{
		{Level: slog.LevelInfo, Msg: "retries exhausted",
			Attrs: retryAttrs("ERROR", map[string]any{"attempt": int64(2), "err": errGateway})},
	}, h.Records())
	assert.Same(t, logger, r.Config().Logger)
}

// TestLoggerSaysWhyRetryingStopped: a call stopped by the budget (or MaxDuration) logs the
// ending error, whose message names the reason.
func TestLoggerSaysWhyRetryingStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, logger := logtest.New(slog.LevelInfo)
		budget, err := retry.NewBudget(retry.BudgetConfig{Ratio: 1, MinRetriesPerSecond: retry.NoBudgetMinimum})
		require.NoError(t, err)
		r, err := retry.New("payment", retry.Config{MaxAttempts: 5, WaitDuration: 100 * ms, Budget: budget, Logger: logger})
		require.NoError(t, err)

		_, err = retry.Execute(context.Background(), r, newScript(fail(errGateway)).call)
		require.ErrorIs(t, err, retry.ErrBudgetExhausted)
		assert.EqualError(t, err, "retry: Retry 'payment' stopped after 2 of 5 attempts (retry budget exhausted): gateway 503")
		assert.Equal(t, []logtest.Record{
			{Level: slog.LevelInfo, Msg: "retries exhausted",
				Attrs: retryAttrs("ERROR", map[string]any{"attempt": int64(2), "err": err})},
		}, h.Records())
	})
}
