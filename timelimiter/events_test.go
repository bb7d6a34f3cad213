package timelimiter_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/timelimiter"
)

func TestOnSuccessAndOnErrorRecordAsResilience4j(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newLimiter(t, timelimiter.Config{})
		r := record(tl)
		now := time.Now()
		timeout := &timelimiter.TimeoutError{Name: "test", Timeout: time.Second}
		wrapped := fmt.Errorf("stream item: %w", timeout)
		tl.OnSuccess(3 * time.Millisecond)
		tl.OnError(4*time.Millisecond, errBoom)
		tl.OnError(5*time.Millisecond, wrapped)
		tl.OnError(6*time.Millisecond, timelimiter.ErrTimeout)
		tl.OnError(7*time.Millisecond, nil)
		assert.Equal(t, []timelimiter.Event{
			{Name: "test", Type: timelimiter.EventSuccess, Time: now, Duration: 3 * time.Millisecond},
			{Name: "test", Type: timelimiter.EventError, Time: now, Duration: 4 * time.Millisecond, Err: errBoom},
			{Name: "test", Type: timelimiter.EventTimeout, Time: now, Duration: 5 * time.Millisecond, Err: wrapped},
			{Name: "test", Type: timelimiter.EventTimeout, Time: now, Duration: 6 * time.Millisecond, Err: timelimiter.ErrTimeout},
			{Name: "test", Type: timelimiter.EventSuccess, Time: now, Duration: 7 * time.Millisecond},
		}, r.get())
		assert.Equal(t, timelimiter.Metrics{NumberOfSuccessfulCalls: 2, NumberOfFailedCalls: 1, NumberOfTimedOutCalls: 2}, tl.Metrics())
	})
}

func TestUnsubscribeStopsEvents(t *testing.T) {
	tl := newLimiter(t, timelimiter.Config{})
	n := 0
	unsubscribe := tl.Subscribe(func(timelimiter.Event) { n++ })
	tl.OnSuccess(0)
	unsubscribe()
	tl.OnSuccess(0)
	assert.Equal(t, 1, n)
	assert.Equal(t, int64(2), tl.Metrics().NumberOfSuccessfulCalls, "counting does not depend on subscribers")
}

// Consumers run on the caller's goroutine before Execute returns, and may read the limiter.
func TestConsumerRunsBeforeExecuteReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newLimiter(t, timelimiter.Config{TimeoutDuration: 10 * time.Millisecond})
		var seen []timelimiter.Metrics
		tl.Subscribe(func(timelimiter.Event) { seen = append(seen, tl.Metrics()) })
		_, _ = timelimiter.Execute(context.Background(), tl, sleeper(time.Millisecond, 1, nil))
		_, _ = timelimiter.Execute(context.Background(), tl, sleeper(time.Second, 1, nil))
		assert.Equal(t, []timelimiter.Metrics{
			{NumberOfSuccessfulCalls: 1},
			{NumberOfAbandonedCalls: 1, NumberOfSuccessfulCalls: 1, NumberOfTimedOutCalls: 1},
		}, seen)
		time.Sleep(time.Second)
		synctest.Wait()
	})
}

func TestErrorsMatchAsDocumented(t *testing.T) {
	assert.ErrorIs(t, timelimiter.ErrTimeout, context.DeadlineExceeded)
	assert.NotErrorIs(t, context.DeadlineExceeded, timelimiter.ErrTimeout)
	assert.EqualError(t, timelimiter.ErrTimeout, "timelimiter: timeout")
	te := &timelimiter.TimeoutError{Name: "x", Timeout: time.Second}
	assert.ErrorIs(t, te, timelimiter.ErrTimeout)
	assert.ErrorIs(t, te, context.DeadlineExceeded)
	assert.NotErrorIs(t, te, context.Canceled)
	assert.NoError(t, te.Unwrap())
	cause := fmt.Errorf("dial: %w", context.DeadlineExceeded)
	assert.Same(t, cause, (&timelimiter.TimeoutError{Err: cause}).Unwrap())
}

func TestEventTypeString(t *testing.T) {
	assert.Equal(t, "SUCCESS", timelimiter.EventSuccess.String())
	assert.Equal(t, "ERROR", timelimiter.EventError.String())
	assert.Equal(t, "TIMEOUT", timelimiter.EventTimeout.String())
	assert.Equal(t, "EventType(9)", timelimiter.EventType(9).String())
}
