package timelimiter_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/timelimiter"
)

func TestEventsChannelDropsWhenFullAndEndsWithContext(t *testing.T) {
	tl := newLimiter(t, timelimiter.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	ch, dropped := tl.Events(ctx, 2)
	tl.OnSuccess(3 * time.Millisecond)
	tl.OnError(4*time.Millisecond, timelimiter.ErrTimeout)
	tl.OnError(5*time.Millisecond, errBoom) // dropped: the buffer is full
	assert.Equal(t, uint64(1), dropped())
	cancel()
	var got []timelimiter.Event
	for e := range ch {
		e.Time = time.Time{}
		got = append(got, e)
	}
	assert.Equal(t, []timelimiter.Event{
		{Name: "test", Type: timelimiter.EventSuccess, Duration: 3 * time.Millisecond},
		{Name: "test", Type: timelimiter.EventTimeout, Duration: 4 * time.Millisecond, Err: timelimiter.ErrTimeout},
	}, got)
}

func TestEventSeqEndsOnBreak(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newLimiter(t, timelimiter.Config{})
		seq, dropped := tl.EventSeq(context.Background(), 4)
		var got []timelimiter.EventType
		done := make(chan struct{})
		go func() {
			defer close(done)
			for e := range seq {
				got = append(got, e.Type)
				break
			}
		}()
		synctest.Wait()
		tl.OnError(time.Millisecond, errBoom)
		<-done
		assert.Equal(t, []timelimiter.EventType{timelimiter.EventError}, got)
		assert.Equal(t, uint64(0), dropped())

		var nilLimiter *timelimiter.TimeLimiter
		ch, n := nilLimiter.Events(context.Background(), 1)
		_, open := <-ch
		assert.False(t, open)
		assert.Equal(t, uint64(0), n())
		s, _ := nilLimiter.EventSeq(context.Background(), 1)
		for range s {
			t.Fatal("a nil TimeLimiter yields nothing")
		}
	})
}
