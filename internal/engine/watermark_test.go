package engine

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWatermarkAdvance: an element counts once complete and every Result acknowledged; the
// watermark moves past every later element already done.
func TestWatermarkAdvance(t *testing.T) {
	w := NewWatermark()
	require.NoError(t, w.Bind())
	require.ErrorIs(t, w.Bind(), ErrWatermarkInUse)

	w.Complete(1) // dropped by a filter: done
	w.Sending(2)
	w.Sending(2)
	w.Complete(2)
	w.Ack(2)
	assert.Equal(t, 0, w.Load())
	w.Sending(0)
	w.Ack(0) // acknowledged before complete: not done yet
	assert.Equal(t, 0, w.Load())
	w.Complete(0)
	assert.Equal(t, 2, w.Load())
	w.Ack(2)
	assert.Equal(t, 3, w.Load())
	assert.Empty(t, w.open)
	w.Ack(0) // below the watermark: ignored
	assert.Equal(t, 3, w.Load())
}

// TestWatermarkConcurrent: Sending and Complete from several goroutines, Ack and Load from
// others, end at the number of elements.
func TestWatermarkConcurrent(t *testing.T) {
	const n, workers = 1000, 4
	w := NewWatermark()
	acks := make(chan int, n)
	var wg sync.WaitGroup
	for k := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := k; i < n; i += workers {
				w.Sending(i)
				acks <- i
				w.Complete(i)
			}
		}()
	}
	var loads sync.WaitGroup
	loads.Add(1)
	go func() {
		defer loads.Done()
		last := 0
		for last < n {
			got := w.Load()
			if got < last {
				t.Errorf("watermark went down from %d to %d", last, got)
				return
			}
			last = got
		}
	}()
	for range n {
		w.Ack(<-acks)
	}
	wg.Wait()
	loads.Wait()
	assert.Equal(t, n, w.Load())
}

// TestWatermarkAckNext: AckNext acknowledges the items in the order they were sent, skipping
// those of no element.
func TestWatermarkAckNext(t *testing.T) {
	w := NewWatermark()
	w.Sending(1)
	w.SendingOther()
	w.Sending(0)
	w.Complete(1)
	w.Complete(0)
	w.AckNext() // element 1's
	assert.Equal(t, 0, w.Load())
	w.AckNext() // the upstream error's
	assert.Equal(t, 0, w.Load())
	w.AckNext() // element 0's
	assert.Equal(t, 2, w.Load())
	w.AckNext() // nothing left
	assert.Equal(t, 2, w.Load())
	assert.Empty(t, w.sent)
}
