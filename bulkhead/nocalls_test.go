package bulkhead_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/bulkhead"
)

// NoConcurrentCalls, as Resilience4j's maxConcurrentCalls = 0: every call is refused and the
// metrics report 0 available of 0 allowed. The value round-trips through Config.
func TestNoConcurrentCallsRefusesEveryCall(t *testing.T) {
	b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: bulkhead.NoConcurrentCalls})
	rec := record(b)
	assert.Equal(t, bulkhead.Metrics{}, b.Metrics())
	assert.Equal(t, bulkhead.NoConcurrentCalls, b.Config().MaxConcurrentCalls)

	ran := 0
	_, err := bulkhead.Execute(context.Background(), b, func(context.Context) (int, error) { ran++; return 1, nil })
	assert.EqualError(t, err, "bulkhead: Bulkhead 'test' is full and does not permit further calls")
	assert.ErrorIs(t, err, bulkhead.ErrBulkheadFull)
	assert.Zero(t, ran)
	assert.False(t, b.TryAcquire())
	assert.ErrorIs(t, b.Acquire(context.Background()), bulkhead.ErrBulkheadFull)
	assert.Equal(t, []bulkhead.EventType{bulkhead.EventCallRejected, bulkhead.EventCallRejected,
		bulkhead.EventCallRejected}, rec.get())
	assert.Equal(t, bulkhead.Metrics{}, b.Metrics())

	again := newBulkhead(t, b.Config())
	assert.Equal(t, bulkhead.Metrics{}, again.Metrics())
}

// A caller of a bulkhead of no permits waits the whole MaxWaitDuration, as on Resilience4j's
// semaphore of 0 permits, unless the bulkhead grows meanwhile; it can be resized to and from
// NoConcurrentCalls while calls are in flight.
func TestNoConcurrentCallsAtRunTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: bulkhead.NoConcurrentCalls, MaxWaitDuration: time.Second})
		start := time.Now()
		assert.ErrorIs(t, b.Acquire(t.Context()), bulkhead.ErrBulkheadFull)
		assert.Equal(t, time.Second, time.Since(start))

		got := make(chan time.Duration, 1)
		go func() {
			assert.NoError(t, b.Acquire(t.Context()))
			got <- time.Since(start)
		}()
		time.Sleep(300 * time.Millisecond)
		assert.Equal(t, bulkhead.Metrics{NumberOfWaitingCalls: 1}, b.Metrics())
		require.NoError(t, resize(b, 2))
		assert.Equal(t, 1300*time.Millisecond, <-got, "growth hands the permit over at once")
		assert.Equal(t, bulkhead.Metrics{AvailableConcurrentCalls: 1, MaxAllowedConcurrentCalls: 2}, b.Metrics())

		require.NoError(t, resize(b, bulkhead.NoConcurrentCalls))
		assert.Equal(t, bulkhead.Metrics{}, b.Metrics(), "one call in flight, none allowed")
		assert.False(t, b.TryAcquire())
		b.Release()
		assert.Equal(t, bulkhead.Metrics{}, b.Metrics())
		assert.Equal(t, bulkhead.Config{MaxConcurrentCalls: bulkhead.NoConcurrentCalls, MaxWaitDuration: time.Second},
			b.Config())
	})
}

// A change of MaxWaitDuration applies to the callers that start waiting after it, as
// Resilience4j's changeConfig: a caller refused after the change waits exactly the new
// duration, and a caller queued before it keeps its own deadline.
func TestChangeConfigMaxWaitDurationAppliesToLaterWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1, MaxWaitDuration: 100 * time.Millisecond})
		require.True(t, b.TryAcquire())
		start := time.Now()
		refusedAt := func() <-chan time.Duration {
			at := make(chan time.Duration, 1)
			go func() {
				assert.ErrorIs(t, b.Acquire(t.Context()), bulkhead.ErrBulkheadFull)
				at <- time.Since(start)
			}()
			return at
		}

		early := refusedAt() // queued before the change: deadline at 100ms
		time.Sleep(50 * time.Millisecond)
		cfg := b.Config()
		cfg.MaxWaitDuration = 300 * time.Millisecond
		require.NoError(t, b.ChangeConfig(cfg))
		late := refusedAt() // queued after the change: deadline at 50 + 300ms
		synctest.Wait()
		assert.Equal(t, bulkhead.Metrics{MaxAllowedConcurrentCalls: 1, NumberOfWaitingCalls: 2}, b.Metrics())

		assert.Equal(t, 100*time.Millisecond, <-early, "the earlier waiter keeps its deadline")
		again := refusedAt() // the refused caller tries again: it waits the new duration
		assert.Equal(t, 350*time.Millisecond, <-late)
		assert.Equal(t, 400*time.Millisecond, <-again)

		cfg.MaxWaitDuration = 0
		require.NoError(t, b.ChangeConfig(cfg))
		now := time.Since(start)
		assert.Equal(t, now, <-refusedAt(), "no wait at all after a change to 0")
		b.Release()
		assert.Equal(t, bulkhead.Metrics{AvailableConcurrentCalls: 1, MaxAllowedConcurrentCalls: 1}, b.Metrics())
	})
}

// A change of fairness leaves the queue first come, first served (newcomers barging is checked
// in TestChangeConfigOfFairnessAppliesToNewcomers).
func TestChangeConfigFairnessAppliesToLaterCallers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 2, MaxWaitDuration: time.Hour})
		require.True(t, b.TryAcquire())
		require.True(t, b.TryAcquire())
		order := make(chan int, 2)
		for i := range 2 {
			go func() {
				assert.NoError(t, b.Acquire(t.Context()))
				order <- i
			}()
			synctest.Wait()
		}
		cfg := b.Config()
		cfg.DisableFairCallHandling = true
		require.NoError(t, b.ChangeConfig(cfg))
		assert.True(t, b.Config().DisableFairCallHandling)

		b.Release()
		assert.Equal(t, 0, <-order, "the queue stays first come, first served")
		b.Release()
		assert.Equal(t, 1, <-order)
		assert.Equal(t, bulkhead.Metrics{MaxAllowedConcurrentCalls: 2}, b.Metrics())
	})
}
