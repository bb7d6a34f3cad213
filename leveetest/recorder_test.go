package leveetest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveetest"
	"github.com/levee-go/levee/retry"
)

func TestRecordBreakerEvents(t *testing.T) {
	cb, err := circuitbreaker.New("cb", circuitbreaker.Config{SlidingWindowSize: 2, MinimumNumberOfCalls: 2})
	require.NoError(t, err)
	defer func() { require.NoError(t, cb.TransitionToDisabledState()) }()
	events := leveetest.Record(t, cb.Subscribe)
	stub := leveetest.NewStub(leveetest.Fail[int](errDown))
	for range 3 {
		_, _ = circuitbreaker.Execute(context.Background(), cb, stub.Call)
	}
	var types []circuitbreaker.EventType
	for _, e := range events.Events() {
		types = append(types, e.Type)
	}
	assert.Equal(t, []circuitbreaker.EventType{
		circuitbreaker.EventError,
		circuitbreaker.EventError, circuitbreaker.EventFailureRateExceeded, circuitbreaker.EventStateTransition,
		circuitbreaker.EventNotPermitted,
	}, types)
	assert.Equal(t, 5, events.Len())
	assert.Equal(t, 2, events.Count(func(e circuitbreaker.Event) bool { return e.Type == circuitbreaker.EventError }))
	assert.Equal(t, 5, events.Count(nil))
	assert.Equal(t, int64(2), stub.Invocations())

	events.Reset()
	assert.Equal(t, 0, events.Len())
	_, _ = circuitbreaker.Execute(context.Background(), cb, stub.Call)
	assert.Equal(t, 1, events.Len())
}

func TestRecordUnsubscribesAtCleanup(t *testing.T) {
	bh, err := bulkhead.New("bh", bulkhead.Config{MaxConcurrentCalls: 1})
	require.NoError(t, err)
	f := &fakeTB{TB: t}
	events := leveetest.Record(f, bh.Subscribe)
	_, err = bulkhead.Execute(context.Background(), bh, leveetest.NewStub(leveetest.OK(1)).Call)
	require.NoError(t, err)
	assert.Equal(t, 2, events.Len()) // CALL_PERMITTED, CALL_FINISHED
	require.Len(t, f.cleanups, 1)
	f.runCleanups()
	_, err = bulkhead.Execute(context.Background(), bh, leveetest.NewStub(leveetest.OK(1)).Call)
	require.NoError(t, err)
	assert.Equal(t, 2, events.Len())
	assert.Equal(t, []bulkhead.EventType{bulkhead.EventCallPermitted, bulkhead.EventCallFinished},
		[]bulkhead.EventType{events.Events()[0].Type, events.Events()[1].Type})
}

func TestRecordRetryAndNil(t *testing.T) {
	r, err := retry.New("r", retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
	require.NoError(t, err)
	events := leveetest.Record(t, r.Subscribe)
	stub := leveetest.NewStub(leveetest.First(2, leveetest.Fail[string](errDown), leveetest.OK("up")))
	v, err := retry.Execute(context.Background(), r, stub.Call)
	require.NoError(t, err)
	assert.Equal(t, "up", v)
	assert.Equal(t, 2, events.Count(func(e retry.Event) bool { return e.Type == retry.EventRetry }))
	assert.Equal(t, 1, events.Count(func(e retry.Event) bool { return e.Type == retry.EventSuccess }))

	none := leveetest.Record[int](t, nil)
	assert.Equal(t, 0, none.Len())
	assert.Empty(t, none.Events())
}
