package fallback_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/internal/safe"
)

func TestEventTypeString(t *testing.T) {
	assert.Equal(t, "ANSWERED", fallback.EventAnswered.String())
	assert.Equal(t, "FAILED", fallback.EventFailed.String())
	assert.Equal(t, "UNHANDLED", fallback.EventUnhandled.String())
	assert.Equal(t, "UNKNOWN", fallback.EventType(0).String())
}

// Every use is counted and published, with the handler's run time measured on the clock.
func TestEventsAndMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		slow := func(d time.Duration, v string, err error) func(context.Context, error) (string, error) {
			return func(context.Context, error) (string, error) { time.Sleep(d); return v, err }
		}
		f := labelled(t,
			fallback.OnError(errBoom, slow(10*time.Millisecond, "boom", nil)),
			fallback.OnType(func(context.Context, *GatewayError) (string, error) {
				time.Sleep(20 * time.Millisecond)
				return "", errPriceUnavailable
			}),
			fallback.OnError(errNotFound, func(context.Context, error) (string, error) { panic("handler broke") }),
			fallback.OnResult(func(v string) bool { return v == "" }, func(context.Context, string) (string, error) {
				time.Sleep(5 * time.Millisecond)
				return "placeholder", nil
			}),
		)
		var events []fallback.Event
		var seen []fallback.Metrics
		unsubscribe := f.Subscribe(func(e fallback.Event) {
			events = append(events, e)
			seen = append(seen, f.Metrics()) // a consumer may read the Fallback: no lock is held
		})

		gw := &GatewayError{Status: 503}
		run := func(call func(context.Context) (string, error)) error {
			_, err := fallback.Execute(context.Background(), f, call)
			return err
		}
		require.NoError(t, run(failing[string](errBoom)))                                     // t=0, answered after 10ms
		failedErr := run(failing[string](gw))                                                 // t=10ms, failed after 20ms
		require.ErrorIs(t, failedErr, errPriceUnavailable)                                    //
		require.NoError(t, run(func(context.Context) (string, error) { return "live", nil })) // t=30ms, no event
		time.Sleep(time.Second)                                                               //
		require.ErrorIs(t, run(failing[string](errOther)), errOther)                          // t=1.03s, unhandled
		require.NoError(t, run(func(context.Context) (string, error) { return "", nil }))     // t=1.03s, replaced after 5ms
		panicErr := run(failing[string](errNotFound))                                         // t=1.035s, handler panics
		var pe *safe.PanicError
		require.ErrorAs(t, panicErr, &pe)

		want := []fallback.Event{
			{Name: "pricing", Type: fallback.EventAnswered, Time: start.Add(10 * time.Millisecond), Duration: 10 * time.Millisecond,
				Handler: `error "boom"`, Cause: errBoom},
			{Name: "pricing", Type: fallback.EventFailed, Time: start.Add(30 * time.Millisecond), Duration: 20 * time.Millisecond,
				Handler: "type *fallback_test.GatewayError", Cause: gw, Err: errPriceUnavailable},
			{Name: "pricing", Type: fallback.EventUnhandled, Time: start.Add(1030 * time.Millisecond), Cause: errOther},
			{Name: "pricing", Type: fallback.EventAnswered, Time: start.Add(1035 * time.Millisecond), Duration: 5 * time.Millisecond,
				Handler: "result"},
			{Name: "pricing", Type: fallback.EventFailed, Time: start.Add(1035 * time.Millisecond),
				Handler: `error "not found"`, Cause: errNotFound, Err: pe},
		}
		require.Len(t, events, len(want))
		for i := range want {
			assert.Equal(t, want[i], events[i], "event %d", i)
		}
		assert.Equal(t, []fallback.Metrics{
			{NumberOfFallbackAnswers: 1},
			{NumberOfFallbackAnswers: 1, NumberOfFailedFallbacks: 1},
			{NumberOfFallbackAnswers: 1, NumberOfFailedFallbacks: 1, NumberOfUnhandledErrors: 1},
			{NumberOfFallbackAnswers: 2, NumberOfFailedFallbacks: 1, NumberOfUnhandledErrors: 1},
			{NumberOfFallbackAnswers: 2, NumberOfFailedFallbacks: 2, NumberOfUnhandledErrors: 1},
		}, seen, "each consumer sees the use it is told about already counted")

		unsubscribe()
		unsubscribe() // harmless twice
		require.NoError(t, run(failing[string](errBoom)))
		assert.Len(t, events, len(want), "no event after unsubscribing")
		assert.Equal(t, fallback.Metrics{NumberOfFallbackAnswers: 3, NumberOfFailedFallbacks: 2, NumberOfUnhandledErrors: 1}, f.Metrics())
	})
}

// A consumer that panics does not break the call or the other consumers.
func TestPanickingConsumer(t *testing.T) {
	f := labelled(t, fallback.OnAny(answer("fb")))
	var got []fallback.EventType
	defer f.Subscribe(func(fallback.Event) { panic("consumer broke") })()
	defer f.Subscribe(func(e fallback.Event) { got = append(got, e.Type) })()
	v, err := fallback.Execute(context.Background(), f, failing[string](errBoom))
	require.NoError(t, err)
	assert.Equal(t, "fb", v)
	assert.Equal(t, []fallback.EventType{fallback.EventAnswered}, got)
}

// A failure while choosing the handler (a panicking Is method) names no handler.
func TestFailedChoiceEvent(t *testing.T) {
	f := labelled(t, fallback.OnError(errNotFound, answer("n")))
	var got []fallback.Event
	defer f.Subscribe(func(e fallback.Event) { got = append(got, e) })()
	_, err := fallback.Execute(context.Background(), f, failing[string](panickyIs{}))
	require.Error(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, fallback.EventFailed, got[0].Type)
	assert.Equal(t, "", got[0].Handler)
	assert.Equal(t, error(panickyIs{}), got[0].Cause)
	var pe *safe.PanicError
	assert.True(t, errors.As(got[0].Err, &pe))
}
