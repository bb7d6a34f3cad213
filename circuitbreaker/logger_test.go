package circuitbreaker_test

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cb "github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/internal/logging/logtest"
)

func transitionRecord(level slog.Level, from, to string) logtest.Record {
	return logtest.Record{Level: level, Msg: "circuit breaker state transition", Attrs: map[string]any{
		"pattern": "circuitbreaker", "name": "payment", "event": "STATE_TRANSITION", "from": from, "to": to}}
}

func notPermittedRecord() logtest.Record {
	return logtest.Record{Level: slog.LevelDebug, Msg: "circuit breaker call not permitted", Attrs: map[string]any{
		"pattern": "circuitbreaker", "name": "payment", "event": "NOT_PERMITTED",
		"err": &cb.CallNotPermittedError{Name: "payment", State: cb.Open}}}
}

func TestLoggerLogsTheBreakerCycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, logger := logtest.New(slog.LevelDebug)
		b, err := cb.New("payment", cb.Config{SlidingWindowSize: 5, MinimumNumberOfCalls: 5,
			WaitDurationInOpenState: 10 * time.Second, PermittedNumberOfCallsInHalfOpenState: 1, Logger: logger})
		require.NoError(t, err)

		for range 5 {
			require.ErrorIs(t, fail(b), errBoom)
		}
		require.Equal(t, cb.Open, b.State())
		assert.Equal(t, []logtest.Record{
			{Level: slog.LevelInfo, Msg: "circuit breaker failure rate exceeded", Attrs: map[string]any{
				"pattern": "circuitbreaker", "name": "payment", "event": "FAILURE_RATE_EXCEEDED",
				"failure_rate": 100.0, "slow_call_rate": 0.0}},
			transitionRecord(slog.LevelWarn, "CLOSED", "OPEN"),
		}, h.Records(), "the failures themselves are not logged")

		require.ErrorIs(t, ok(b), cb.ErrCallNotPermitted)
		got := h.Records()
		require.Len(t, got, 3)
		assert.Equal(t, notPermittedRecord(), got[2])

		time.Sleep(10*time.Second + 1)
		require.NoError(t, ok(b)) // the probe: HALF_OPEN, then CLOSED
		assert.Equal(t, []logtest.Record{
			transitionRecord(slog.LevelInfo, "OPEN", "HALF_OPEN"),
			transitionRecord(slog.LevelInfo, "HALF_OPEN", "CLOSED"),
		}, h.Records()[3:], "the success is not logged")
	})
}

func TestLoggerLevelsOfManualTransitionsAndReset(t *testing.T) {
	h, logger := logtest.New(slog.LevelDebug)
	b, err := cb.New("payment", cb.Config{Logger: logger})
	require.NoError(t, err)

	require.NoError(t, b.TransitionToForcedOpenState())
	require.ErrorIs(t, ok(b), cb.ErrCallNotPermitted) // FORCED_OPEN publishes no NOT_PERMITTED
	require.NoError(t, b.TransitionToDisabledState())
	require.NoError(t, b.TransitionToMetricsOnlyState())
	require.NoError(t, b.TransitionToClosedState())
	require.NoError(t, b.TransitionToOpenState())
	require.NoError(t, b.TransitionToHalfOpenState())
	b.Reset()
	require.NoError(t, b.TransitionToClosedState()) // same state: no transition

	assert.Equal(t, []logtest.Record{
		transitionRecord(slog.LevelWarn, "CLOSED", "FORCED_OPEN"),
		transitionRecord(slog.LevelInfo, "FORCED_OPEN", "DISABLED"),
		transitionRecord(slog.LevelInfo, "DISABLED", "METRICS_ONLY"),
		transitionRecord(slog.LevelInfo, "METRICS_ONLY", "CLOSED"),
		transitionRecord(slog.LevelWarn, "CLOSED", "OPEN"),
		transitionRecord(slog.LevelInfo, "OPEN", "HALF_OPEN"),
		transitionRecord(slog.LevelInfo, "HALF_OPEN", "CLOSED"),
		{Level: slog.LevelInfo, Msg: "circuit breaker reset", Attrs: map[string]any{
			"pattern": "circuitbreaker", "name": "payment", "event": "RESET"}},
	}, h.Records())
}

func TestLoggerLogsSlowCallRateExceeded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, logger := logtest.New(slog.LevelInfo)
		b, err := cb.New("payment", cb.Config{SlidingWindowSize: 2, MinimumNumberOfCalls: 2,
			SlowCallDurationThreshold: time.Second, SlowCallRateThreshold: 50, Logger: logger})
		require.NoError(t, err)
		require.NoError(t, ok(b))
		require.NoError(t, run(b, 2*time.Second, nil))
		assert.Equal(t, []logtest.Record{
			{Level: slog.LevelInfo, Msg: "circuit breaker slow call rate exceeded", Attrs: map[string]any{
				"pattern": "circuitbreaker", "name": "payment", "event": "SLOW_CALL_RATE_EXCEEDED",
				"failure_rate": 0.0, "slow_call_rate": 50.0}},
			transitionRecord(slog.LevelWarn, "CLOSED", "OPEN"),
		}, h.Records())
	})
}

func TestLoggerAtInfoSkipsRefusals(t *testing.T) {
	h, logger := logtest.New(slog.LevelInfo)
	b, err := cb.New("payment", cb.Config{InitialState: cb.Open, Logger: logger})
	require.NoError(t, err)
	require.ErrorIs(t, ok(b), cb.ErrCallNotPermitted)
	assert.Empty(t, h.Records())
}

func TestLoggerIsKeptInConfig(t *testing.T) {
	_, logger := logtest.New(slog.LevelInfo)
	b, err := cb.New("payment", cb.Config{Logger: logger})
	require.NoError(t, err)
	assert.Same(t, logger, b.Config().Logger)
}

// A logger whose handler is not enabled for Debug keeps the success path and refusals free of
// allocations.
func TestLoggerAtInfoDoesNotAllocate(t *testing.T) {
	_, logger := logtest.New(slog.LevelInfo)
	b, err := cb.New("payment", cb.Config{SlidingWindowSize: 10, Logger: logger})
	require.NoError(t, err)
	ctx := context.Background()
	assert.Equal(t, 0.0, testing.AllocsPerRun(1000, func() {
		if v, err := cb.Execute(ctx, b, func(context.Context) (int, error) { return 42, nil }); v != 42 || err != nil {
			panic("unexpected result")
		}
	}), "success")
	open, err := cb.New("payment", cb.Config{InitialState: cb.Open, Logger: logger})
	require.NoError(t, err)
	assert.Equal(t, 0.0, testing.AllocsPerRun(1000, func() {
		if _, err := open.Acquire(); err == nil {
			panic("permitted")
		}
	}), "refusal")
}

// BenchmarkExecuteWithLoggerAtInfo is BenchmarkExecute with a Logger set whose handler is
// enabled from Info on: the cost of the events the logger makes the breaker publish.
func BenchmarkExecuteWithLoggerAtInfo(b *testing.B) {
	_, logger := logtest.New(slog.LevelInfo)
	br, err := cb.New("bench", cb.Config{Logger: logger})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	call := func(context.Context) (int, error) { return 1, nil }
	b.ReportAllocs()
	for b.Loop() {
		_, _ = cb.Execute(ctx, br, call)
	}
}
