package waiters

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGrantServesInArrivalOrder: grants go to the waiters in the order they queued, each with
// its own value, and a grant to an empty queue does nothing.
func TestGrantServesInArrivalOrder(t *testing.T) {
	var q Queue[int]
	assert.True(t, q.Empty())
	assert.False(t, q.Grant(9))
	a, b, c := q.Push(), q.Push(), q.Push()
	assert.Equal(t, 3, q.Len())
	assert.False(t, q.Empty())
	require.True(t, q.Grant(1))
	require.True(t, q.Grant(2))
	assert.Equal(t, 1, q.Len())
	assert.Equal(t, 1, a.value)
	assert.Equal(t, 2, b.value)
	assert.True(t, a.granted)
	assert.True(t, b.granted)
	assert.False(t, c.granted)
	<-a.ready
	<-b.ready
	require.True(t, q.Grant(3))
	assert.True(t, q.Empty())
	assert.Equal(t, 0, q.Len())
	assert.Equal(t, 3, c.value)
}

// TestLeavingKeepsTheOrderOfTheOthers: a waiter leaving from the front, middle or back leaves
// the others queued in order.
func TestLeavingKeepsTheOrderOfTheOthers(t *testing.T) {
	for _, leaving := range []int{0, 1, 2} {
		var mu sync.Mutex
		var q Queue[int]
		ws := []*Waiter[int]{q.Push(), q.Push(), q.Push()}
		lefts := 0
		assert.False(t, q.leave(ws[leaving], &mu, func() { lefts++ }))
		assert.Equal(t, 1, lefts)
		assert.Equal(t, 2, q.Len())
		var got []*Waiter[int]
		for w := q.head; w != nil; w = w.next {
			got = append(got, w)
		}
		want := append(append([]*Waiter[int](nil), ws[:leaving]...), ws[leaving+1:]...)
		assert.Equal(t, want, got, "leaving %d", leaving)
		assert.Equal(t, want[1], q.tail)
	}
}

func TestAwait(t *testing.T) {
	t.Run("granted while waiting", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var mu sync.Mutex
			var q Queue[string]
			w := q.Push()
			go func() {
				time.Sleep(time.Second)
				mu.Lock()
				q.Grant("permit")
				mu.Unlock()
			}()
			start := time.Now()
			v, res := q.Await(context.Background(), w, time.Minute, &mu, nil)
			assert.Equal(t, Granted, res)
			assert.Equal(t, "permit", v)
			assert.Equal(t, time.Second, time.Since(start))
		})
	})
	t.Run("timed out", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var mu sync.Mutex
			var q Queue[string]
			w := q.Push()
			lefts := 0
			start := time.Now()
			v, res := q.Await(context.Background(), w, 3*time.Second, &mu, func() { lefts++ })
			assert.Equal(t, TimedOut, res)
			assert.Equal(t, "", v)
			assert.Equal(t, 3*time.Second, time.Since(start))
			assert.Equal(t, 1, lefts)
			assert.True(t, q.Empty())
		})
	})
	t.Run("cancelled", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var mu sync.Mutex
			var q Queue[string]
			w := q.Push()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			lefts := 0
			v, res := q.Await(ctx, w, time.Minute, &mu, func() { lefts++ })
			assert.Equal(t, Cancelled, res)
			assert.Equal(t, "", v)
			assert.Equal(t, 1, lefts)
			assert.True(t, q.Empty())
		})
	})
	t.Run("granted to a cancelled caller", func(t *testing.T) {
		// The grant came before Await looked: the cancellation still wins, and the caller
		// gets the value to give back.
		var mu sync.Mutex
		var q Queue[string]
		w := q.Push()
		q.Grant("permit")
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		lefts := 0
		v, res := q.Await(ctx, w, time.Minute, &mu, func() { lefts++ })
		assert.Equal(t, CancelledGranted, res)
		assert.Equal(t, "permit", v)
		assert.Equal(t, 0, lefts)
	})
	t.Run("granted as the wait ends", func(t *testing.T) {
		// A grant made while the timer fired is found on leaving: the waiter keeps it.
		var mu sync.Mutex
		var q Queue[string]
		w := q.Push()
		mu.Lock()
		q.Grant("permit")
		w.ready = make(chan struct{}) // as if Await had not yet seen the close
		mu.Unlock()
		v, res := q.Await(context.Background(), w, time.Nanosecond, &mu, nil)
		assert.Equal(t, Granted, res)
		assert.Equal(t, "permit", v)
	})
}

// A grant made as the caller's context ended is found on leaving: the cancellation wins, and
// the caller gets the value to give back.
func TestAwaitCancelledAsGranted(t *testing.T) {
	var mu sync.Mutex
	var q Queue[string]
	w := q.Push()
	mu.Lock()
	q.Grant("permit")
	w.ready = make(chan struct{}) // as if Await had not yet seen the close
	mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	lefts := 0
	v, res := q.Await(ctx, w, time.Minute, &mu, func() { lefts++ })
	assert.Equal(t, CancelledGranted, res)
	assert.Equal(t, "permit", v)
	assert.Equal(t, 0, lefts)
}
