package circuitbreaker_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cb "github.com/levee-go/levee/circuitbreaker"
)

func TestEventTypeString(t *testing.T) {
	want := []string{"SUCCESS", "ERROR", "IGNORED_ERROR", "NOT_PERMITTED", "STATE_TRANSITION", "RESET",
		"FAILURE_RATE_EXCEEDED", "SLOW_CALL_RATE_EXCEEDED"}
	for i, w := range want {
		assert.Equal(t, w, cb.EventType(i).String())
	}
	assert.Equal(t, "INITIAL_STATE", cb.EventInitialState.String())
	assert.Equal(t, "EventType(9)", cb.EventType(9).String())
	assert.Equal(t, "EventType(-1)", cb.EventType(-1).String())
}

func TestEventsOfACallThatOpensTheBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := cb.New("payment", cb.Config{SlidingWindowSize: 2, FailureRateThreshold: 50})
		require.NoError(t, err)
		ev := record(b)
		start := time.Now()
		require.NoError(t, run(b, 30*time.Millisecond, nil))
		require.ErrorIs(t, run(b, 20*time.Millisecond, errBoom), errBoom)
		evs := ev.list()
		require.Len(t, evs, 4)
		assert.Equal(t, cb.Event{Name: "payment", Type: cb.EventSuccess, Time: start.Add(30 * time.Millisecond),
			Duration: 30 * time.Millisecond}, evs[0])
		assert.Equal(t, cb.Event{Name: "payment", Type: cb.EventError, Time: start.Add(50 * time.Millisecond),
			Duration: 20 * time.Millisecond, Err: errBoom}, evs[1])
		assert.Equal(t, cb.Event{Name: "payment", Type: cb.EventFailureRateExceeded, Time: start.Add(50 * time.Millisecond),
			FailureRate: 50, SlowCallRate: 0}, evs[2])
		assert.Equal(t, cb.Event{Name: "payment", Type: cb.EventStateTransition, Time: start.Add(50 * time.Millisecond),
			From: cb.Closed, To: cb.Open}, evs[3])

		ev.reset()
		_ = ok(b)
		assert.Equal(t, []cb.Event{{Name: "payment", Type: cb.EventNotPermitted, Time: start.Add(50 * time.Millisecond)}}, ev.list())
	})
}

func TestEventsSuppressedInDisabledAndForcedOpen(t *testing.T) {
	b := mustNew(t, cb.Config{SlidingWindowSize: 2, IgnoreErrors: []error{errInvalid}})
	ev := record(b)
	require.NoError(t, b.TransitionToDisabledState())
	_ = ok(b)
	_ = fail(b)
	_ = run(b, 0, errInvalid)
	acquire(t, b).OnResult(1, nil)
	late := acquire(t, b)
	require.NoError(t, b.TransitionToForcedOpenState())
	_ = ok(b)
	require.Error(t, try(b))
	late.OnError(errBoom)
	b.Reset()
	assert.Equal(t, []cb.EventType{cb.EventStateTransition, cb.EventStateTransition, cb.EventStateTransition, cb.EventReset}, ev.types())
	assert.Equal(t, []string{"CLOSED>DISABLED", "DISABLED>FORCED_OPEN", "FORCED_OPEN>CLOSED"}, ev.transitions())
}

func TestNotPermittedEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, small())
		ev := record(b)
		require.NoError(t, b.TransitionToOpenState())
		require.Error(t, try(b))
		time.Sleep(10*time.Second + 1)
		require.NoError(t, try(b))
		require.NoError(t, try(b))
		require.Error(t, try(b))
		assert.Equal(t, []cb.EventType{cb.EventStateTransition, cb.EventNotPermitted, cb.EventStateTransition, cb.EventNotPermitted}, ev.types())
		assert.Equal(t, 1, b.Metrics().NumberOfNotPermittedCalls, "HALF_OPEN counts its own refusals")
	})
}

// TestLazyHalfOpenRefusalPublishesOneEvent: a request that moves OPEN to HALF_OPEN and then
// finds no permit left publishes one NOT_PERMITTED (Resilience4j publishes it twice) and counts
// one refusal.
func TestLazyHalfOpenRefusalPublishesOneEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := small()
		cfg.PermittedNumberOfCallsInHalfOpenState = 1
		b := mustNew(t, cfg)
		require.NoError(t, b.TransitionToOpenState())
		time.Sleep(10*time.Second + 1)
		var types []cb.EventType
		b.Subscribe(func(e cb.Event) {
			types = append(types, e.Type)
			if e.Type == cb.EventStateTransition && e.To == cb.HalfOpen {
				// Another caller takes the only permit between our transition and our request.
				require.NoError(t, try(b))
			}
		})
		err := try(b)
		require.ErrorIs(t, err, cb.ErrCallNotPermitted)
		var cnp *cb.CallNotPermittedError
		require.ErrorAs(t, err, &cnp)
		assert.Equal(t, cb.HalfOpen, cnp.State)
		assert.Equal(t, []cb.EventType{cb.EventStateTransition, cb.EventNotPermitted}, types)
		assert.Equal(t, 1, b.Metrics().NumberOfNotPermittedCalls)
	})
}

func TestUnsubscribe(t *testing.T) {
	b := mustNew(t, cb.Config{})
	var first, second []cb.EventType
	unsub := b.Subscribe(func(e cb.Event) { first = append(first, e.Type) })
	b.Subscribe(func(e cb.Event) { second = append(second, e.Type) })
	acquire(t, b).OnSuccess()
	unsub()
	unsub() // harmless twice
	acquire(t, b).OnSuccess()
	assert.Equal(t, []cb.EventType{cb.EventSuccess}, first)
	assert.Equal(t, []cb.EventType{cb.EventSuccess, cb.EventSuccess}, second)
	assert.NotPanics(t, func() { b.Subscribe(nil)() })
}

func TestPanickingConsumerDoesNotBreakTheBreaker(t *testing.T) {
	b := mustNew(t, cb.Config{SlidingWindowSize: 2})
	b.Subscribe(func(cb.Event) { panic("consumer bug") })
	var got []cb.EventType
	b.Subscribe(func(e cb.Event) { got = append(got, e.Type) })
	require.ErrorIs(t, fail(b), errBoom)
	require.ErrorIs(t, fail(b), errBoom)
	assert.Equal(t, cb.Open, b.State())
	assert.Equal(t, []cb.EventType{cb.EventError, cb.EventError, cb.EventFailureRateExceeded, cb.EventStateTransition}, got)
}

func TestEventString(t *testing.T) {
	tests := []struct {
		e    cb.Event
		want string
	}{
		{cb.Event{Name: "p", Type: cb.EventSuccess, Duration: 3 * time.Millisecond}, "CircuitBreaker 'p' recorded a successful call. Elapsed time: 3ms"},
		{cb.Event{Name: "p", Type: cb.EventError, Duration: time.Second, Err: errBoom}, "CircuitBreaker 'p' recorded an error: 'boom'. Elapsed time: 1s"},
		{cb.Event{Name: "p", Type: cb.EventIgnoredError, Err: errInvalid}, "CircuitBreaker 'p' recorded an error which has been ignored: 'invalid order'. Elapsed time: 0s"},
		{cb.Event{Name: "p", Type: cb.EventNotPermitted}, "CircuitBreaker 'p' recorded a call which was not permitted."},
		{cb.Event{Name: "p", Type: cb.EventStateTransition, From: cb.Closed, To: cb.Open}, "CircuitBreaker 'p' changed state from CLOSED to OPEN"},
		{cb.Event{Name: "p", Type: cb.EventReset}, "CircuitBreaker 'p' reset"},
		{cb.Event{Name: "p", Type: cb.EventFailureRateExceeded, FailureRate: 62.5}, "CircuitBreaker 'p' exceeded failure rate threshold. Current failure rate: 62.5"},
		{cb.Event{Name: "p", Type: cb.EventSlowCallRateExceeded, SlowCallRate: 100}, "CircuitBreaker 'p' exceeded slow call rate threshold. Current slow call rate: 100"},
		{cb.Event{Name: "p", Type: 42}, "CircuitBreaker 'p' EventType(42)"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.e.String())
	}
}
