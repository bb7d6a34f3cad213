package retry_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/retry"
)

func TestEventsChannelDropsWhenFullAndEndsWithContext(t *testing.T) {
	r := newRetry(t, noWait(2))
	ctx, cancel := context.WithCancel(context.Background())
	ch, dropped := r.Events(ctx, 3)
	for range 2 {
		_, _ = retry.Execute(context.Background(), r, newScript(fail(errGateway)).call) // RETRY, ERROR
	}
	assert.Equal(t, uint64(1), dropped(), "the buffer of 3 took RETRY, ERROR, RETRY; publishing did not wait")
	cancel()
	var got []retry.EventType
	for e := range ch { // closed once ctx is done
		got = append(got, e.Type)
	}
	assert.Equal(t, []retry.EventType{retry.EventRetry, retry.EventError, retry.EventRetry}, got)
}

func TestEventSeqEndsOnBreak(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetry(t, noWait(2))
		seq, dropped := r.EventSeq(context.Background(), 4)
		var got []retry.Event
		done := make(chan struct{})
		go func() {
			defer close(done)
			for e := range seq {
				got = append(got, e)
				break
			}
		}()
		synctest.Wait() // ranging: subscribed
		_, _ = retry.Execute(context.Background(), r, newScript(fail(errGateway)).call)
		<-done
		assert.Equal(t, []retry.Event{{Name: "test", Type: retry.EventRetry, Time: got[0].Time,
			NumberOfRetryAttempts: 1, LastErr: errGateway}}, got)
		assert.Equal(t, uint64(0), dropped())
		paid := func(context.Context) (string, error) { return "PAID", nil }
		assert.Zero(t, testing.AllocsPerRun(100, func() {
			_, _ = retry.Execute(context.Background(), r, paid)
		}), "break removed the subscription")

		var nilRetry *retry.Retry
		ch, n := nilRetry.Events(context.Background(), 1)
		_, open := <-ch
		assert.False(t, open)
		assert.Equal(t, uint64(0), n())
		for range func() func(func(retry.Event) bool) { s, _ := nilRetry.EventSeq(context.Background(), 1); return s }() {
			t.Fatal("a nil Retry yields nothing")
		}
	})
}
