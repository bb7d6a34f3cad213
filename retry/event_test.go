package retry_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/retry"
)

func TestEventTypeString(t *testing.T) {
	for typ, want := range map[retry.EventType]string{
		retry.EventRetry:        "RETRY",
		retry.EventSuccess:      "SUCCESS",
		retry.EventError:        "ERROR",
		retry.EventIgnoredError: "IGNORED_ERROR",
		retry.EventType(0):      "EventType(0)",
		retry.EventType(42):     "EventType(42)",
	} {
		assert.Equal(t, want, typ.String())
	}
}

func TestEventsCarryNameAndTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, err := retry.New("payment", retry.Config{MaxAttempts: 2, WaitDuration: 250 * ms})
		require.NoError(t, err)
		rec := record(t, r)
		start := time.Now()
		_, err = retry.Execute(context.Background(), r, newScript(fail(errGateway), ok("PAID")).call)
		require.NoError(t, err)
		got := rec.all()
		require.Len(t, got, 2)
		assert.Equal(t, retry.Event{Name: "payment", Type: retry.EventRetry, Time: start,
			NumberOfRetryAttempts: 1, LastErr: errGateway, WaitInterval: 250 * ms}, got[0])
		assert.Equal(t, retry.Event{Name: "payment", Type: retry.EventSuccess, Time: start.Add(250 * ms),
			NumberOfRetryAttempts: 1, LastErr: errGateway}, got[1])
	})
}

func TestUnsubscribeStopsDelivery(t *testing.T) {
	r := newRetry(t, noWait(2))
	n := 0
	unsubscribe := r.Subscribe(func(retry.Event) { n++ })
	_, _ = retry.Execute(context.Background(), r, newScript(fail(errGateway)).call)
	assert.Equal(t, 2, n) // RETRY, ERROR
	unsubscribe()
	unsubscribe() // harmless twice
	_, _ = retry.Execute(context.Background(), r, newScript(fail(errGateway)).call)
	assert.Equal(t, 2, n)
}

func TestSubscriberMayUseTheRetry(t *testing.T) {
	r := newRetry(t, noWait(2))
	var seen []retry.Metrics
	r.Subscribe(func(retry.Event) { seen = append(seen, r.Metrics()) })
	_, _ = retry.Execute(context.Background(), r, newScript(fail(errGateway)).call)
	// Counters are updated before the event is published.
	assert.Equal(t, []retry.Metrics{metrics(0, 0, 0, 0, 1), metrics(0, 0, 0, 1, 2)}, seen)
}

func TestPanickingSubscriberDoesNotBreakTheCall(t *testing.T) {
	r := newRetry(t, noWait(3))
	r.Subscribe(func(retry.Event) { panic("broken consumer") })
	rec := record(t, r)
	v, err := retry.Execute(context.Background(), r, newScript(fail(errGateway), ok("PAID")).call)
	require.NoError(t, err)
	assert.Equal(t, "PAID", v)
	assert.Equal(t, []retry.EventType{retry.EventRetry, retry.EventSuccess}, rec.types())
}
