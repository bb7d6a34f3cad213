package operators_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/operators"
)

func recordBulkhead(bh *bulkhead.Bulkhead) func() []string {
	var mu sync.Mutex
	var got []string
	bh.Subscribe(func(e bulkhead.Event) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, e.Type.String())
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

func TestBulkheadHoldsOnePermitForTheSubscriptionsLife(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bh := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1})
		events := recordBulkhead(bh)
		p := newProbe(1)
		p.hang = true
		ctx, cancel := context.WithCancel(context.Background())
		ch := operators.Bulkhead(bh)(p.Observable()).Observe(rxgo.WithContext(ctx))
		assert.Equal(t, 1, (<-ch).V)
		assert.Equal(t, 0, bh.Metrics().AvailableConcurrentCalls)

		q := newProbe(2)
		_, items := observe(operators.Bulkhead(bh)(q.Observable()))
		require.Len(t, items, 1)
		assert.ErrorIs(t, items[0].E, bulkhead.ErrBulkheadFull)
		assert.Equal(t, int32(0), q.subs.Load(), "a refused subscription never observes its upstream")

		cancel()
		for range ch {
		}
		assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)
		assert.Equal(t, []string{"CALL_PERMITTED", "CALL_REJECTED", "CALL_FINISHED"}, events(),
			"cancelled after an item: the call ran")
	})
}

func TestBulkheadReleasesOnCompletionAndOnError(t *testing.T) {
	bh := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1})
	events := recordBulkhead(bh)
	got, _ := observe(operators.Bulkhead(bh)(rxgo.Just(1, 2)()))
	assert.Equal(t, []string{"1", "2"}, got)
	got, _ = observe(operators.Bulkhead(bh)(newProbe(errBoom, 2).Observable()))
	assert.Equal(t, []string{"E:boom"}, got)
	assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)
	assert.Equal(t, []string{"CALL_PERMITTED", "CALL_FINISHED", "CALL_PERMITTED", "CALL_FINISHED"}, events())
}

func TestBulkheadCancelBeforeAnyItemReleasesWithoutFinished(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bh := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1})
		events := recordBulkhead(bh)
		p := newProbe()
		p.hang = true
		ctx, cancel := context.WithCancel(context.Background())
		ch := operators.Bulkhead(bh)(p.Observable()).Observe(rxgo.WithContext(ctx))
		synctest.Wait()
		cancel()
		for range ch {
		}
		assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)
		assert.Equal(t, []string{"CALL_PERMITTED"}, events())
	})
}

func TestBulkheadWaitsUpToMaxWaitDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bh := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1, MaxWaitDuration: time.Second})
		slow := newProbe(1)
		slow.gap = 600 * time.Millisecond
		first := make(chan struct{})
		go func() { defer close(first); observe(operators.Bulkhead(bh)(slow.Observable())) }()
		synctest.Wait()
		start := time.Now()
		got, _ := observe(operators.Bulkhead(bh)(rxgo.Just(2)()))
		assert.Equal(t, []string{"2"}, got)
		assert.Equal(t, 600*time.Millisecond, time.Since(start), "admitted when the first subscription ended")

		<-first
		slow.gap = 2 * time.Second
		second := make(chan struct{})
		go func() { defer close(second); observe(operators.Bulkhead(bh)(slow.Observable())) }()
		synctest.Wait()
		start = time.Now()
		_, items := observe(operators.Bulkhead(bh)(rxgo.Just(2)()))
		require.Len(t, items, 1)
		assert.ErrorIs(t, items[0].E, bulkhead.ErrBulkheadFull)
		assert.Equal(t, time.Second, time.Since(start))
		<-second
	})
}

func TestBulkheadConsumerCancellingWhileWaitingHoldsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bh := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1, MaxWaitDuration: time.Hour})
		hold := newProbe()
		hold.hang = true
		hctx, hcancel := context.WithCancel(context.Background())
		hch := operators.Bulkhead(bh)(hold.Observable()).Observe(rxgo.WithContext(hctx))
		synctest.Wait()

		p := newProbe(1)
		ctx, cancel := context.WithCancel(context.Background())
		ch := operators.Bulkhead(bh)(p.Observable()).Observe(rxgo.WithContext(ctx))
		synctest.Wait()
		assert.Equal(t, 1, bh.Metrics().NumberOfWaitingCalls)
		cancel()
		got := []string{}
		for it := range ch {
			got = append(got, show(it))
		}
		assert.Empty(t, got, "cancellation is not an error of the subscription")
		assert.Equal(t, 0, bh.Metrics().NumberOfWaitingCalls)
		hcancel()
		for range hch {
		}
		assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)
		assert.Equal(t, int32(0), p.subs.Load())
	})
}

func TestBulkheadNilFailsEachSubscription(t *testing.T) {
	_, items := observe(operators.Bulkhead(nil)(rxgo.Just(1)()))
	require.Len(t, items, 1)
	assert.ErrorIs(t, items[0].E, bulkhead.ErrNilBulkhead)
}
