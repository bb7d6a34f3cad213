package ratelimiter_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/ratelimiter"
)

func TestEventsChannelDropsWhenFullAndEndsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 2, time.Second, time.Second)
		ctx, cancel := context.WithCancel(context.Background())
		ch, dropped := rl.Events(ctx, 2)
		for range 3 {
			_, _ = rl.ReservePermission(2) // SUCCESSFUL_ACQUIRE twice, then FAILED_ACQUIRE: dropped
		}
		assert.Equal(t, uint64(1), dropped())
		cancel()
		var got []ratelimiter.EventType
		for e := range ch {
			got = append(got, e.Type)
		}
		assert.Equal(t, []ratelimiter.EventType{ratelimiter.EventSuccessfulAcquire, ratelimiter.EventSuccessfulAcquire}, got)
	})
}

func TestEventSeqEndsOnBreak(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := newLimiter(t, 2, time.Second, time.Second)
		seq, dropped := rl.EventSeq(context.Background(), 4)
		var got []ratelimiter.EventType
		done := make(chan struct{})
		go func() {
			defer close(done)
			for e := range seq {
				got = append(got, e.Type)
				break
			}
		}()
		synctest.Wait()
		rl.DrainPermissions()
		<-done
		assert.Equal(t, []ratelimiter.EventType{ratelimiter.EventDrained}, got)
		assert.Equal(t, uint64(0), dropped())

		var nilLimiter *ratelimiter.RateLimiter
		ch, n := nilLimiter.Events(context.Background(), 1)
		_, open := <-ch
		assert.False(t, open)
		assert.Equal(t, uint64(0), n())
		s, _ := nilLimiter.EventSeq(context.Background(), 1)
		for range s {
			t.Fatal("a nil RateLimiter yields nothing")
		}
	})
}
