package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lines returns a JSON Lines file of orders placed at the given offsets from 09:00.
func lines(offsets ...time.Duration) string {
	var b strings.Builder
	t0 := time.Date(2025, time.March, 14, 9, 0, 0, 0, time.UTC)
	for i, off := range offsets {
		fmt.Fprintf(&b, `{"order_id":"ORD-%06d","customer_id":"C-1","sku":"MUG-%03d","quantity":1,"placed_at":%q}`+"\n",
			i+1, i+1, t0.Add(off).Format(time.RFC3339Nano))
	}
	return b.String()
}

func TestReplaySendsEveryOrderInFileOrder(t *testing.T) {
	ctx := context.Background()
	var arrived []int
	in, done := replay(ctx, strings.NewReader(lines(0, time.Second, time.Second, time.Hour)), 0, 0,
		func(i int) { arrived = append(arrived, i) })
	var ids []string
	for o := range in {
		ids = append(ids, o.ID)
	}
	p := <-done
	require.NoError(t, p.err)
	assert.Equal(t, 4, p.sent)
	assert.Equal(t, []string{"ORD-000001", "ORD-000002", "ORD-000003", "ORD-000004"}, ids)
	assert.Equal(t, []int{0, 1, 2, 3}, arrived, "before runs once per order, before it is sent")
}

func TestReplayStopsAtTheLimit(t *testing.T) {
	in, done := replay(context.Background(), strings.NewReader(lines(0, 0, 0, 0, 0)), 2, 0, nil)
	n := 0
	for range in {
		n++
	}
	p := <-done
	require.NoError(t, p.err)
	assert.Equal(t, 2, n)
	assert.Equal(t, 2, p.sent)
}

// With a speedup, each order arrives at its placing time divided by the speedup, counted from
// the first order; orders placed at the same instant arrive together.
func TestReplayPacesOrdersAsTheyWerePlaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		file := lines(0, 3*time.Second, 3*time.Second, 9*time.Second, 9*time.Second+300*time.Millisecond)
		start := time.Now()
		in, done := replay(context.Background(), strings.NewReader(file), 0, 3, nil)
		var at []time.Duration
		for range in {
			at = append(at, time.Since(start))
		}
		require.NoError(t, (<-done).err)
		assert.Equal(t, []time.Duration{0, time.Second, time.Second, 3 * time.Second, 3100 * time.Millisecond}, at)
	})
}

// A producer that fell behind (the consumer was slow) sends what is due at once instead of
// waiting the gaps again.
func TestReplayCatchesUpAfterASlowConsumer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		file := lines(0, time.Second, 2*time.Second, 3*time.Second)
		start := time.Now()
		in, done := replay(context.Background(), strings.NewReader(file), 0, 1, nil)
		<-in
		time.Sleep(2500 * time.Millisecond) // the consumer is busy
		var at []time.Duration
		for range in {
			at = append(at, time.Since(start))
		}
		require.NoError(t, (<-done).err)
		assert.Equal(t, []time.Duration{2500 * time.Millisecond, 2500 * time.Millisecond, 3 * time.Second}, at)
	})
}

// Cancelling the context ends the producer whether it is waiting for the consumer or for the
// next order's time, and it reports how many orders it sent.
func TestReplayStopsWhenCancelled(t *testing.T) {
	for _, speedup := range []float64{0, 1} {
		t.Run(fmt.Sprint("speedup ", speedup), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				in, done := replay(ctx, strings.NewReader(lines(0, time.Hour, 2*time.Hour)), 0, speedup, nil)
				<-in
				synctest.Wait() // the producer is blocked: on the send, or on its timer
				cancel()
				p := <-done
				assert.ErrorIs(t, p.err, context.Canceled)
				assert.Equal(t, 1, p.sent)
				_, open := <-in
				assert.False(t, open, "the channel is closed")
			})
		})
	}
}

func TestReplayStopsAtABadLine(t *testing.T) {
	file := lines(0) + "{\"order_id\": 12}\n" + lines(0)
	in, done := replay(context.Background(), strings.NewReader(file), 0, 0, nil)
	n := 0
	for range in {
		n++
	}
	p := <-done
	assert.Equal(t, 1, n)
	assert.Equal(t, 1, p.sent)
	require.Error(t, p.err)
	assert.Contains(t, p.err.Error(), "line 2:")
}
