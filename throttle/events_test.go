package throttle_test

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/internal/logging/logtest"
	"github.com/levee-go/levee/throttle"
)

// A call let through publishes CALL_PERMITTED; a local refusal publishes CALL_REJECTED with
// the levee rejection the caller received, and is logged at Debug with it under "err".
func TestEventsAndLogger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, logger := logtest.New(slog.LevelDebug)
		th := newThrottler(t, throttle.Config{Random: func() float64 { return 0.4 }, Logger: logger})
		var events []throttle.Event
		unsubscribe := th.Subscribe(func(e throttle.Event) { events = append(events, e) })
		start := time.Now()

		_, err := throttle.Execute(context.Background(), th, func(context.Context) (int, error) { return 0, errOverloaded })
		require.ErrorIs(t, err, errOverloaded) // 1 request, 0 accepts: probability 1/2
		assert.Empty(t, h.Records(), "a permitted call is not logged")
		_, err = throttle.Execute(context.Background(), th, func(context.Context) (int, error) { return 1, nil })
		require.ErrorIs(t, err, throttle.ErrThrottled) // 0.4 < 0.5
		assert.True(t, levee.IsRejection(err))

		full := &throttle.ThrottledError{Name: "backend"}
		assert.Equal(t, []throttle.Event{
			{Name: "backend", Type: throttle.EventCallPermitted, Time: start},
			{Name: "backend", Type: throttle.EventCallRejected, Time: start, RejectionProbability: 0.5, Err: full},
		}, events)
		assert.True(t, levee.IsRejection(events[1].Err))
		assert.Equal(t, []logtest.Record{{Level: slog.LevelDebug, Msg: "throttler call rejected", Attrs: map[string]any{
			"pattern": "throttle", "name": "backend", "event": "CALL_REJECTED", "err": full,
		}}}, h.Records())

		unsubscribe()
		_, _ = th.Acquire()
		assert.Len(t, events, 2, "unsubscribed")
		assert.Len(t, h.Records(), 2, "the logger stays subscribed")
	})
}

func TestEventChannelAndNil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := newThrottler(t, throttle.Config{})
		ctx, cancel := context.WithCancel(context.Background())
		ch, dropped := th.Events(ctx, 4)
		p, err := th.Acquire()
		require.NoError(t, err)
		p.OnSuccess()
		e := <-ch
		assert.Equal(t, throttle.EventCallPermitted, e.Type)
		assert.Zero(t, dropped())
		cancel()
		synctest.Wait()
		_, open := <-ch
		assert.False(t, open)
		assert.Equal(t, "CALL_REJECTED", throttle.EventCallRejected.String())
		assert.Equal(t, "EventType(9)", throttle.EventType(9).String())

		var nilT *throttle.Throttler
		nilT.Subscribe(func(throttle.Event) {})()
		nch, _ := nilT.Events(context.Background(), 1)
		_, open = <-nch
		assert.False(t, open)
	})
}
