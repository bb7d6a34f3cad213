package bulkhead_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/bulkhead"
)

func TestEventsCarryNameTypeAndTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := bulkhead.New("inventory", bulkhead.Config{MaxConcurrentCalls: 1, MaxWaitDuration: 50 * time.Millisecond})
		require.NoError(t, err)
		var got []bulkhead.Event
		unsubscribe := b.Subscribe(func(e bulkhead.Event) { got = append(got, e) })
		t0 := time.Now()
		require.NoError(t, b.Acquire(context.Background()))
		require.Error(t, b.Acquire(context.Background())) // waits 50ms, then rejected
		time.Sleep(10 * time.Millisecond)
		b.Release()
		assert.Equal(t, []bulkhead.Event{
			{Name: "inventory", Type: bulkhead.EventCallPermitted, Time: t0},
			{Name: "inventory", Type: bulkhead.EventCallRejected, Time: t0.Add(50 * time.Millisecond)},
			{Name: "inventory", Type: bulkhead.EventCallFinished, Time: t0.Add(60 * time.Millisecond)},
		}, got)

		unsubscribe()
		assert.True(t, b.TryAcquire())
		b.ReleasePermission()
		assert.Len(t, got, 3, "no event after unsubscribe")
	})
}

func TestReleasePermissionPublishesNoEvent(t *testing.T) {
	b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1})
	r := record(b)
	require.True(t, b.TryAcquire())
	b.ReleasePermission()
	require.True(t, b.TryAcquire())
	b.ReleasePermission()
	assert.Equal(t, []bulkhead.EventType{permitted, permitted}, r.get())
}

func TestUnmatchedReleasePublishesNoEvent(t *testing.T) {
	b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1})
	r := record(b)
	b.Release()
	assert.Empty(t, r.get())
}

// A consumer runs outside every lock, so it may call back into the bulkhead, even from the
// waiting path, without deadlock.
func TestConsumerMayCallBackIntoTheBulkhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1, MaxWaitDuration: time.Second})
		var mu sync.Mutex
		var seen []bulkhead.Metrics
		b.Subscribe(func(bulkhead.Event) {
			m := b.Metrics()
			_ = b.Config()
			mu.Lock()
			seen = append(seen, m)
			mu.Unlock()
		})
		require.True(t, b.TryAcquire())
		done := make(chan error, 1)
		go func() { done <- b.Acquire(context.Background()) }()
		synctest.Wait()
		b.Release()
		require.NoError(t, <-done)
		b.Release()
		assert.Equal(t, []bulkhead.Metrics{
			metrics(0, 1, 0), // permitted
			metrics(0, 1, 0), // finished (the permit already went to the waiter) and the waiter's
			metrics(0, 1, 0), // permitted, in either order
			metrics(1, 1, 0), // finished
		}, seen)
	})
}

func TestEventTypeString(t *testing.T) {
	assert.Equal(t, "CALL_PERMITTED", bulkhead.EventCallPermitted.String())
	assert.Equal(t, "CALL_REJECTED", bulkhead.EventCallRejected.String())
	assert.Equal(t, "CALL_FINISHED", bulkhead.EventCallFinished.String())
	assert.Equal(t, "EventType(0)", bulkhead.EventType(0).String())
}
