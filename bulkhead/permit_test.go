package bulkhead_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/internal/reject"
)

func metrics(avail, max, waiting int) bulkhead.Metrics {
	return bulkhead.Metrics{AvailableConcurrentCalls: avail, MaxAllowedConcurrentCalls: max, NumberOfWaitingCalls: waiting}
}

func TestAcquireGrantsUpToMaxThenRejectsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := bulkhead.New("payment", bulkhead.Config{MaxConcurrentCalls: 3})
		require.NoError(t, err)
		ctx := context.Background()
		for i := range 3 {
			require.NoError(t, b.Acquire(ctx))
			assert.Equal(t, metrics(2-i, 3, 0), b.Metrics())
		}
		start := time.Now()
		err = b.Acquire(ctx)
		assert.Zero(t, time.Since(start), "MaxWaitDuration 0 rejects without waiting")
		require.ErrorIs(t, err, bulkhead.ErrBulkheadFull)
		var full *bulkhead.BulkheadFullError
		require.ErrorAs(t, err, &full)
		assert.Equal(t, "payment", full.Name)
		assert.EqualError(t, err, "bulkhead: Bulkhead 'payment' is full and does not permit further calls")
		assert.True(t, reject.Is(err))
		assert.Equal(t, metrics(0, 3, 0), b.Metrics(), "a rejection takes no permit")
	})
}

func TestRejectionIsTheSameValueEveryTime(t *testing.T) {
	b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1})
	require.True(t, b.TryAcquire())
	err1 := b.Acquire(context.Background())
	err2 := b.Acquire(context.Background())
	require.Error(t, err1)
	assert.Same(t, err1, err2)
}

func TestErrBulkheadFullIsARejection(t *testing.T) {
	assert.True(t, reject.Is(bulkhead.ErrBulkheadFull))
	assert.True(t, reject.Is(fmtWrap(bulkhead.ErrBulkheadFull)))
	assert.False(t, errors.Is(&bulkhead.BulkheadFullError{}, context.DeadlineExceeded))
}

func fmtWrap(err error) error { return errors.Join(errors.New("outer"), err) }

func TestReleaseGivesThePermitBack(t *testing.T) {
	b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 2})
	require.NoError(t, b.Acquire(context.Background()))
	require.NoError(t, b.Acquire(context.Background()))
	b.Release()
	assert.Equal(t, metrics(1, 2, 0), b.Metrics())
	b.ReleasePermission()
	assert.Equal(t, metrics(2, 2, 0), b.Metrics())
}

func TestUnmatchedReleaseDoesNotCreateAPermit(t *testing.T) {
	b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 2})
	b.Release()
	b.ReleasePermission()
	assert.Equal(t, metrics(2, 2, 0), b.Metrics())
	assert.True(t, b.TryAcquire())
	assert.True(t, b.TryAcquire())
	assert.False(t, b.TryAcquire(), "the extra releases must not have lifted the limit")
}

func TestTryAcquireNeverWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1, MaxWaitDuration: time.Hour})
		start := time.Now()
		assert.True(t, b.TryAcquire())
		assert.False(t, b.TryAcquire())
		assert.Zero(t, time.Since(start))
		b.Release()
		assert.True(t, b.TryAcquire())
	})
}

func TestAcquireNilContextMeansBackground(t *testing.T) {
	b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1})
	//lint:ignore SA1012 a nil context is part of the contract
	require.NoError(t, b.Acquire(nil)) //nolint:staticcheck
	assert.Equal(t, 0, b.Metrics().AvailableConcurrentCalls)
}

func TestAcquireWithEndedContextTakesNoPermit(t *testing.T) {
	b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := b.Acquire(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, bulkhead.ErrBulkheadFull)
	assert.Equal(t, metrics(1, 1, 0), b.Metrics())
}

func TestAcquireWaitsForAReleasedPermit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1, MaxWaitDuration: 100 * time.Millisecond})
		require.True(t, b.TryAcquire())
		start := time.Now()
		done := make(chan error, 1)
		go func() { done <- b.Acquire(context.Background()) }()
		synctest.Wait()
		assert.Equal(t, metrics(0, 1, 1), b.Metrics())
		time.Sleep(30 * time.Millisecond)
		b.Release()
		require.NoError(t, <-done)
		assert.Equal(t, 30*time.Millisecond, time.Since(start))
		assert.Equal(t, metrics(0, 1, 0), b.Metrics(), "the released permit went to the waiter")
	})
}

func TestAcquireGivesUpAfterMaxWaitDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1, MaxWaitDuration: 100 * time.Millisecond})
		require.True(t, b.TryAcquire())
		start := time.Now()
		err := b.Acquire(context.Background())
		assert.Equal(t, 100*time.Millisecond, time.Since(start))
		assert.ErrorIs(t, err, bulkhead.ErrBulkheadFull)
		assert.Equal(t, metrics(0, 1, 0), b.Metrics())
		b.Release()
		assert.Equal(t, metrics(1, 1, 0), b.Metrics(), "the waiter that gave up holds nothing")
	})
}

func TestAcquireCancelledWhileWaitingTakesNoPermit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1, MaxWaitDuration: time.Second})
		require.True(t, b.TryAcquire())
		ctx, cancel := context.WithCancel(context.Background())
		start := time.Now()
		time.AfterFunc(10*time.Millisecond, cancel)
		err := b.Acquire(ctx)
		assert.Equal(t, 10*time.Millisecond, time.Since(start))
		assert.ErrorIs(t, err, context.Canceled)
		assert.NotErrorIs(t, err, bulkhead.ErrBulkheadFull)
		assert.False(t, reject.Is(err))
		b.Release()
		assert.Equal(t, metrics(1, 1, 0), b.Metrics())
	})
}

func TestAcquireNeverWaitsPastTheContextDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1, MaxWaitDuration: time.Second})
		require.True(t, b.TryAcquire())
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := b.Acquire(ctx)
		assert.Equal(t, 20*time.Millisecond, time.Since(start))
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, metrics(0, 1, 0), b.Metrics())
	})
}

// A permit granted at the very instant the waiter's context ends goes back: a caller whose
// context has ended never holds a permit.
func TestGrantRacingCancellationLeavesNoPermitHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for range 50 {
			b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1, MaxWaitDuration: time.Second})
			require.True(t, b.TryAcquire())
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
			time.AfterFunc(10*time.Millisecond, b.Release)
			err := b.Acquire(ctx)
			cancel()
			synctest.Wait()
			if err == nil {
				assert.Equal(t, metrics(0, 1, 0), b.Metrics())
				b.Release()
			} else {
				assert.ErrorIs(t, err, context.DeadlineExceeded)
			}
			assert.Equal(t, metrics(1, 1, 0), b.Metrics())
		}
	})
}

// startWaiters starts n callers of Acquire one nanosecond apart, so that their arrival order is
// known, and returns the channel on which each reports its index once it holds a permit.
func startWaiters(t *testing.T, b *bulkhead.Bulkhead, n int) <-chan int {
	t.Helper()
	got := make(chan int, n)
	for i := range n {
		go func() {
			if err := b.Acquire(context.Background()); err == nil {
				got <- i
			}
		}()
		synctest.Wait()
		time.Sleep(time.Nanosecond)
	}
	return got
}

func TestFairWaitersAreServedInArrivalOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1, MaxWaitDuration: time.Hour})
		require.True(t, b.TryAcquire())
		got := startWaiters(t, b, 5)
		assert.Equal(t, 5, b.Metrics().NumberOfWaitingCalls)
		var order []int
		for range 5 {
			b.Release()
			order = append(order, <-got)
		}
		assert.Equal(t, []int{0, 1, 2, 3, 4}, order)
		b.Release()
		assert.Equal(t, metrics(1, 1, 0), b.Metrics())
	})
}

func TestNewcomerDoesNotBargeAheadOfQueuedWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1, MaxWaitDuration: time.Hour})
		require.True(t, b.TryAcquire())
		got := startWaiters(t, b, 1)
		// A newcomer queues behind the waiter, and TryAcquire refuses while someone waits.
		late := make(chan error, 1)
		go func() { late <- b.Acquire(context.Background()) }()
		synctest.Wait()
		assert.False(t, b.TryAcquire())
		b.Release()
		assert.Equal(t, 0, <-got)
		assert.Equal(t, metrics(0, 1, 1), b.Metrics(), "the newcomer still waits")
		b.Release()
		require.NoError(t, <-late)
		b.Release()
		assert.Equal(t, metrics(1, 1, 0), b.Metrics())
	})
}

func TestUnfairWaitersAreStillServedInArrivalOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1, MaxWaitDuration: time.Hour, DisableFairCallHandling: true})
		require.True(t, b.TryAcquire())
		got := startWaiters(t, b, 3)
		var order []int
		for range 3 {
			b.Release()
			order = append(order, <-got)
		}
		assert.Equal(t, []int{0, 1, 2}, order)
		b.Release()
	})
}

func TestWaiterThatGivesUpLeavesTheQueueInPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1, MaxWaitDuration: time.Hour})
		require.True(t, b.TryAcquire())
		got := make(chan int, 3)
		cancels := make([]context.CancelFunc, 3)
		for i := range 3 {
			ctx, cancel := context.WithCancel(context.Background())
			cancels[i] = cancel
			go func() {
				if b.Acquire(ctx) == nil {
					got <- i
				}
			}()
			synctest.Wait()
			time.Sleep(time.Nanosecond)
		}
		cancels[1]() // the middle waiter leaves
		synctest.Wait()
		assert.Equal(t, 2, b.Metrics().NumberOfWaitingCalls)
		b.Release()
		assert.Equal(t, 0, <-got)
		b.Release()
		assert.Equal(t, 2, <-got)
		b.Release()
		assert.Equal(t, metrics(1, 1, 0), b.Metrics())
		for _, c := range cancels {
			c()
		}
	})
}

func TestChangeConfigGrowthWakesWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1, MaxWaitDuration: time.Hour})
		require.True(t, b.TryAcquire())
		got := startWaiters(t, b, 3)
		start := time.Now()
		require.NoError(t, resize(b, 3))
		assert.ElementsMatch(t, []int{0, 1}, []int{<-got, <-got}, "the two first waiters get the two new permits")
		assert.Zero(t, time.Since(start), "growth hands the new permits over at once")
		assert.Equal(t, metrics(0, 3, 1), b.Metrics())
		require.NoError(t, resize(b, 5))
		assert.Equal(t, 2, <-got)
		assert.Equal(t, metrics(1, 5, 0), b.Metrics())
		assert.Equal(t, 5, b.Config().MaxConcurrentCalls)
		for range 4 {
			b.Release()
		}
		assert.Equal(t, metrics(5, 5, 0), b.Metrics())
	})
}

func TestChangeConfigShrinkWhileInFlightClampsAvailableAtZero(t *testing.T) {
	b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 5})
	for range 4 {
		require.True(t, b.TryAcquire())
	}
	require.NoError(t, resize(b, 2)) // returns at once: nothing waits for the 4 calls
	assert.Equal(t, metrics(0, 2, 0), b.Metrics())
	assert.False(t, b.TryAcquire(), "4 in flight, max 2")
	b.Release() // 3 in flight
	assert.Equal(t, metrics(0, 2, 0), b.Metrics())
	assert.False(t, b.TryAcquire())
	b.Release() // 2 in flight
	assert.Equal(t, metrics(0, 2, 0), b.Metrics())
	assert.False(t, b.TryAcquire())
	b.Release() // 1 in flight
	assert.Equal(t, metrics(1, 2, 0), b.Metrics())
	assert.True(t, b.TryAcquire())
	assert.False(t, b.TryAcquire())
	b.Release()
	b.Release()
	assert.Equal(t, metrics(2, 2, 0), b.Metrics())
	b.Release()
	assert.Equal(t, metrics(2, 2, 0), b.Metrics(), "never above max")
}
