package logging

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/internal/event"
	"github.com/levee-go/levee/internal/logging/logtest"
)

func TestSubscribeNilLoggerSubscribesNothing(t *testing.T) {
	var p event.Publisher[int]
	called := false
	unsubscribe := Subscribe(&p, nil, Retry, "r", func(int) (Record, bool) { called = true; return Record{}, true })
	assert.False(t, p.Active())
	p.Publish(1)
	assert.False(t, called)
	assert.NotPanics(t, unsubscribe)
}

func TestSubscribeLogsEveryAttributeInOrder(t *testing.T) {
	h, logger := logtest.New(slog.LevelDebug)
	var p event.Publisher[Record]
	unsubscribe := Subscribe(&p, logger, CircuitBreaker, "pay", func(r Record) (Record, bool) { return r, r.Msg != "" })
	assert.True(t, p.Active())

	errBoom := errors.New("boom")
	p.Publish(Record{Level: slog.LevelWarn, Msg: "all", Event: "E",
		Attrs: WithTransition | WithRates | WithAttempt | WithWait | WithErr,
		From:  "CLOSED", To: "OPEN",
		FailureRate: 100.0 / 3, SlowCallRate: 50,
		Attempt: 2, Wait: time.Second, Err: errBoom})
	p.Publish(Record{Msg: ""})                                                        // describe says no: nothing logged
	p.Publish(Record{Level: slog.LevelInfo, Msg: "none", Event: "F", Attrs: WithErr}) // nil Err: no err attribute
	unsubscribe()
	p.Publish(Record{Level: slog.LevelInfo, Msg: "after", Event: "G"})

	assert.Equal(t, []logtest.Record{
		{Level: slog.LevelWarn, Msg: "all", Attrs: map[string]any{
			"pattern": "circuitbreaker", "name": "pay", "event": "E", "from": "CLOSED", "to": "OPEN",
			"failure_rate": 33.333332, "slow_call_rate": 50.0, "attempt": int64(2), "wait": time.Second, "err": errBoom}},
		{Level: slog.LevelInfo, Msg: "none", Attrs: map[string]any{"pattern": "circuitbreaker", "name": "pay", "event": "F"}},
	}, h.Records())
}

func TestSubscribeLogsOnlyEnabledLevels(t *testing.T) {
	h, logger := logtest.New(slog.LevelInfo)
	var p event.Publisher[slog.Level]
	Subscribe(&p, logger, Bulkhead, "b", func(l slog.Level) (Record, bool) {
		return Record{Level: l, Msg: l.String(), Event: "X"}, true
	})
	for _, l := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn} {
		p.Publish(l)
	}
	got := h.Records()
	assert.Len(t, got, 2)
	assert.Equal(t, []string{"INFO", "WARN"}, []string{got[0].Msg, got[1].Msg})
}

func TestSubscribeDisabledLevelDoesNotAllocate(t *testing.T) {
	_, logger := logtest.New(slog.LevelInfo)
	var p event.Publisher[int]
	Subscribe(&p, logger, RateLimiter, "rl", func(n int) (Record, bool) {
		return Record{Level: slog.LevelDebug, Msg: "refused", Event: "FAILED_ACQUIRE", Attrs: WithAttempt, Attempt: n}, true
	})
	assert.Equal(t, 0.0, testing.AllocsPerRun(100, func() { p.Publish(1) }))
}

func TestTransitionLevel(t *testing.T) {
	for to, want := range map[string]slog.Level{
		"OPEN": slog.LevelWarn, "FORCED_OPEN": slog.LevelWarn,
		"CLOSED": slog.LevelInfo, "HALF_OPEN": slog.LevelInfo, "DISABLED": slog.LevelInfo, "METRICS_ONLY": slog.LevelInfo,
	} {
		assert.Equal(t, want, TransitionLevel(to), to)
	}
}

func TestRateKeepsTheShortestDecimalForm(t *testing.T) {
	assert.Equal(t, 33.333332, rate(100.0/3))
	assert.Equal(t, 100.0, rate(100))
	assert.Equal(t, -1.0, rate(-1))
	assert.Equal(t, 0.1, rate(0.1))
}

func TestBulkheadRejected(t *testing.T) {
	full := errors.New("bulkhead: Bulkhead 'payment' is full and does not permit further calls")
	assert.Equal(t, Record{Level: slog.LevelDebug, Msg: "bulkhead call rejected", Event: "CALL_REJECTED",
		Attrs: WithErr, Err: full}, BulkheadRejected("CALL_REJECTED", full))
}

func TestRefusalCarriesTheError(t *testing.T) {
	refused := errors.New("circuitbreaker: CircuitBreaker 'payment' is OPEN and does not permit further calls")
	r := Refusal("circuit breaker call not permitted", "NOT_PERMITTED", refused)
	assert.Equal(t, []slog.Attr{slog.String(KeyPattern, CircuitBreaker), slog.String(KeyName, "payment"),
		slog.String(KeyEvent, "NOT_PERMITTED"), slog.Any(KeyErr, refused)}, r.attrs(CircuitBreaker, "payment"))
	assert.Equal(t, slog.LevelDebug, r.Level)
}
