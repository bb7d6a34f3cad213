package adaptive_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/internal/logging/logtest"
	"github.com/levee-go/levee/priority"
)

// A shed call publishes CALL_SHED with the *ShedError its caller received, a levee rejection;
// a queued call its limiter refuses publishes CALL_REJECTED with the limiter's error. Both are
// logged at Debug with the error under err.
func TestPrioritizerEventsAndLogger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, logger := logtest.New(slog.LevelDebug)
		l := newLimiter(t, adaptive.Config{InitialLimit: 1, MinLimit: 1, MaxLimit: 1, MaxQueued: 1, MaxWaitDuration: time.Second})
		p, err := adaptive.NewPrioritizer("service", adaptive.PrioritizerConfig{
			QueueStart: 0.5, QueueFull: 1, CalibrationInterval: time.Hour, Logger: logger,
		})
		require.NoError(t, err)
		var mu sync.Mutex // the fake clock orders the events, which the race detector does not see
		var events []adaptive.PrioritizerEvent
		defer p.Subscribe(func(e adaptive.PrioritizerEvent) {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		})()
		start := time.Now()
		at := func(level priority.Level) context.Context { return priority.WithLevel(context.Background(), level) }

		held, err := p.Acquire(at(450), l)
		require.NoError(t, err)
		mu.Lock()
		assert.Empty(t, events, "an admitted call publishes nothing here")
		mu.Unlock()
		waited := make(chan error, 1)
		go func() {
			_, err := p.Acquire(at(420), l) // critical: queues, waits its second, refused
			waited <- err
		}()
		synctest.Wait()
		_, err = p.Acquire(at(10), l) // 1 queued of 1: everything below critical is shed
		require.ErrorIs(t, err, adaptive.ErrShed)
		assert.True(t, levee.IsRejection(err))
		refused := <-waited
		require.ErrorIs(t, refused, adaptive.ErrLimitExceeded)
		held.OnIgnore()
		mu.Lock()
		defer mu.Unlock()

		shed := &adaptive.ShedError{Name: "service", Priority: priority.Sheddable}
		full := &adaptive.LimitExceededError{Name: "dependency"}
		assert.Equal(t, []adaptive.PrioritizerEvent{
			{Name: "service", Type: adaptive.PrioritizerCallShed, Time: start, Limiter: "dependency", Level: 10, Err: shed},
			{Name: "service", Type: adaptive.PrioritizerCallRejected, Time: start.Add(time.Second), Limiter: "dependency", Level: 420, Err: full},
		}, events)
		assert.True(t, levee.IsRejection(events[0].Err))
		assert.True(t, levee.IsRejection(events[1].Err))
		assert.Equal(t, []logtest.Record{
			{Level: slog.LevelDebug, Msg: "prioritizer call shed", Attrs: map[string]any{
				"pattern": "prioritizer", "name": "service", "event": "CALL_SHED", "err": shed}},
			{Level: slog.LevelDebug, Msg: "prioritizer call rejected", Attrs: map[string]any{
				"pattern": "prioritizer", "name": "service", "event": "CALL_REJECTED", "err": full}},
		}, h.Records())
		assert.Equal(t, "CALL_SHED", adaptive.PrioritizerCallShed.String())
		assert.Equal(t, "PrioritizerEventType(7)", adaptive.PrioritizerEventType(7).String())

		var nilP *adaptive.Prioritizer
		nilP.Subscribe(func(adaptive.PrioritizerEvent) {})()
		ch, _ := nilP.Events(context.Background(), 1)
		_, open := <-ch
		assert.False(t, open)
	})
}
