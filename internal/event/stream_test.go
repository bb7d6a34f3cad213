package event

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func drain[E any](ch <-chan E) []E {
	var out []E
	for e := range ch {
		out = append(out, e)
	}
	return out
}

func TestStreamDropsAndCountsWhenFull(t *testing.T) {
	var p Publisher[int]
	s := p.Stream(context.Background(), 3, func() (int, bool) { return 100, true })
	assert.True(t, p.Active())
	for i := 1; i <= 5; i++ {
		p.Publish(i) // never blocks: 100, 1, 2 fill the buffer; 3, 4, 5 are dropped
	}
	assert.Equal(t, uint64(3), s.Dropped())
	s.Close()
	s.Close() // twice is harmless
	assert.False(t, p.Active(), "Close removes the subscription")
	p.Publish(6)
	assert.Equal(t, []int{100, 1, 2}, drain(s.C()), "buffered events are still received after Close")
	assert.Equal(t, uint64(3), s.Dropped(), "nothing is counted after Close")
}

func TestStreamEndsWhenContextIsDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var p Publisher[int]
		ctx, cancel := context.WithCancel(context.Background())
		s := p.Stream(ctx, 4, nil)
		p.Publish(1)
		p.Publish(2)
		cancel()
		synctest.Wait() // the context's AfterFunc has closed the stream
		assert.False(t, p.Active())
		p.Publish(3)
		assert.Equal(t, []int{1, 2}, drain(s.C()))
		assert.Equal(t, uint64(0), s.Dropped())
		s.Close() // after the context: harmless
	})
}

func TestStreamBufferBelowOneIsOne(t *testing.T) {
	for _, buffer := range []int{0, -5} {
		var p Publisher[int]
		s := p.Stream(nil, buffer, nil) //nolint:staticcheck // a nil ctx is documented as Background
		p.Publish(1)
		p.Publish(2)
		assert.Equal(t, 1, cap(s.C()))
		assert.Equal(t, uint64(1), s.Dropped())
		s.Close()
		assert.Equal(t, []int{1}, drain(s.C()))
	}
}

func TestStreamInitialEventCanBeOmitted(t *testing.T) {
	var p Publisher[int]
	s := p.Stream(context.Background(), 2, func() (int, bool) { return 9, false })
	p.Publish(1)
	s.Close()
	assert.Equal(t, []int{1}, drain(s.C()))
}

func TestSeqEndsOnBreakAndOnContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var p Publisher[int]
		ctx, cancel := context.WithCancel(context.Background())
		seq, dropped := p.Seq(ctx, 2, func() (int, bool) { return 0, true })
		assert.False(t, p.Active(), "nothing is subscribed before ranging")

		var got []int
		done := make(chan struct{})
		go func() {
			defer close(done)
			for e := range seq {
				got = append(got, e)
				if e == 2 {
					break
				}
			}
		}()
		synctest.Wait() // the loop waits on the channel, the initial event received
		p.Publish(1)
		synctest.Wait()
		p.Publish(2)
		<-done
		assert.Equal(t, []int{0, 1, 2}, got)
		assert.False(t, p.Active(), "break removes the subscription")

		// A second range subscribes again, with a slow body: the buffer fills and drops are
		// counted; cancelling the context ends the loop after the buffered events.
		got = nil
		gate := make(chan struct{})
		done = make(chan struct{})
		go func() {
			defer close(done)
			for e := range seq {
				got = append(got, e)
				if e == 0 {
					<-gate
				}
			}
		}()
		synctest.Wait() // the body holds the initial event and waits at the gate
		p.Publish(7)
		p.Publish(8)
		p.Publish(9) // the buffer of 2 holds 7 and 8: 9 is dropped
		assert.Equal(t, uint64(1), dropped())
		close(gate)
		synctest.Wait()
		cancel()
		<-done
		assert.Equal(t, []int{0, 7, 8}, got)
		assert.False(t, p.Active())
		assert.Equal(t, uint64(1), dropped())
	})
}

func TestStreamConcurrentPublishAndClose(t *testing.T) {
	var p Publisher[int]
	s := p.Stream(context.Background(), 8, nil)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range 1000 {
				p.Publish(i)
			}
		})
	}
	received := 0
	wg.Go(func() {
		for range s.C() {
			received++
		}
	})
	s.Close()
	wg.Wait()
	require.False(t, p.Active())
	assert.LessOrEqual(t, uint64(received)+s.Dropped(), uint64(4000))
}

func TestStreamCountsEveryEventOnceUnderConcurrency(t *testing.T) {
	var p Publisher[int]
	s := p.Stream(context.Background(), 8, nil)
	received := 0
	consumer := make(chan struct{})
	go func() {
		defer close(consumer)
		for range s.C() {
			received++
		}
	}()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range 1000 {
				p.Publish(i)
			}
		})
	}
	wg.Wait()
	s.Close()
	<-consumer
	assert.Equal(t, uint64(4000), uint64(received)+s.Dropped(), "each event is received or counted as dropped")
}
