package bulkhead_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/internal/safe"
)

// recorder collects the types of the events a bulkhead publishes.
type recorder struct {
	mu    sync.Mutex
	types []bulkhead.EventType
}

func record(b *bulkhead.Bulkhead) *recorder {
	r := &recorder{}
	b.Subscribe(func(e bulkhead.Event) {
		r.mu.Lock()
		r.types = append(r.types, e.Type)
		r.mu.Unlock()
	})
	return r
}

func (r *recorder) get() []bulkhead.EventType {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]bulkhead.EventType(nil), r.types...)
}

const (
	permitted = bulkhead.EventCallPermitted
	rejected  = bulkhead.EventCallRejected
	finished  = bulkhead.EventCallFinished
)

var errBoom = errors.New("boom")

func TestExecuteReturnsValueAndReleases(t *testing.T) {
	b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1})
	r := record(b)
	var during bulkhead.Metrics
	v, err := bulkhead.Execute(context.Background(), b, func(context.Context) (int, error) {
		during = b.Metrics()
		return 42, nil
	})
	require.NoError(t, err)
	assert.Equal(t, 42, v)
	assert.Equal(t, metrics(0, 1, 0), during, "the call runs under the permit")
	assert.Equal(t, metrics(1, 1, 0), b.Metrics())
	assert.Equal(t, []bulkhead.EventType{permitted, finished}, r.get())
}

func TestExecuteReturnsTheCallsErrorUnchangedAndReleases(t *testing.T) {
	b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1})
	r := record(b)
	v, err := bulkhead.Execute(context.Background(), b, func(context.Context) (string, error) {
		return "partial", errBoom
	})
	assert.Same(t, errBoom, err)
	assert.Equal(t, "partial", v)
	assert.Equal(t, metrics(1, 1, 0), b.Metrics())
	assert.Equal(t, []bulkhead.EventType{permitted, finished}, r.get())
}

func TestExecutePanicReleasesAndReturnsPanicError(t *testing.T) {
	b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1})
	r := record(b)
	v, err := bulkhead.Execute(context.Background(), b, func(context.Context) (int, error) {
		panic(errBoom)
	})
	assert.Zero(t, v)
	var pe *safe.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Same(t, errBoom, pe.Value)
	assert.ErrorIs(t, err, errBoom)
	assert.Equal(t, metrics(1, 1, 0), b.Metrics())
	assert.Equal(t, []bulkhead.EventType{permitted, finished}, r.get())
}

func TestExecuteGoexitInCallReleases(t *testing.T) {
	b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1})
	r := record(b)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = bulkhead.Execute(context.Background(), b, func(context.Context) (int, error) {
			runtime.Goexit()
			return 0, nil
		})
	}()
	<-done
	assert.Equal(t, metrics(1, 1, 0), b.Metrics())
	assert.Equal(t, []bulkhead.EventType{permitted}, r.get(), "released without CALL_FINISHED")
}

func TestExecuteRejectsWithoutCallingWhenFull(t *testing.T) {
	b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1})
	require.True(t, b.TryAcquire())
	r := record(b)
	called := false
	_, err := bulkhead.Execute(context.Background(), b, func(context.Context) (int, error) {
		called = true
		return 1, nil
	})
	assert.False(t, called)
	assert.ErrorIs(t, err, bulkhead.ErrBulkheadFull)
	assert.Equal(t, []bulkhead.EventType{rejected}, r.get())
	assert.Equal(t, metrics(0, 1, 0), b.Metrics())
}

func TestExecuteCancelledWhileWaitingNeverCallsAndTakesNoPermit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1, MaxWaitDuration: time.Second})
		require.True(t, b.TryAcquire())
		r := record(b)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(5*time.Millisecond, cancel)
		called := false
		_, err := bulkhead.Execute(ctx, b, func(context.Context) (int, error) {
			called = true
			return 1, nil
		})
		assert.False(t, called)
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, []bulkhead.EventType{rejected}, r.get())
		b.Release()
		assert.Equal(t, metrics(1, 1, 0), b.Metrics())
	})
}

func TestExecuteCancelledWhileRunningReleasesWithoutFinishedEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1})
		r := record(b)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(5*time.Millisecond, cancel)
		_, err := bulkhead.Execute(ctx, b, func(ctx context.Context) (int, error) {
			<-ctx.Done()
			return 0, ctx.Err()
		})
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, metrics(1, 1, 0), b.Metrics())
		assert.Equal(t, []bulkhead.EventType{permitted}, r.get())
	})
}

// A call that ignores the cancellation and succeeds ran to completion: it is finished.
func TestExecuteCallSucceedingAfterCancellationIsFinished(t *testing.T) {
	b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1})
	r := record(b)
	ctx, cancel := context.WithCancel(context.Background())
	v, err := bulkhead.Execute(ctx, b, func(context.Context) (int, error) {
		cancel()
		return 7, nil
	})
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	assert.Equal(t, metrics(1, 1, 0), b.Metrics())
	assert.Equal(t, []bulkhead.EventType{permitted, finished}, r.get())
}

func TestExecuteInvalidArguments(t *testing.T) {
	b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1})
	r := record(b)

	_, err := bulkhead.Execute[int](context.Background(), b, nil)
	assert.ErrorIs(t, err, safe.ErrNilCall)
	_, err = bulkhead.Execute(context.Background(), nil, func(context.Context) (int, error) { return 1, nil })
	assert.ErrorIs(t, err, bulkhead.ErrNilBulkhead)
	assert.Empty(t, r.get(), "no permit was taken")

	var got context.Context
	//lint:ignore SA1012 a nil context is part of the contract
	_, err = bulkhead.Execute(nil, b, func(ctx context.Context) (int, error) { //nolint:staticcheck
		got = ctx
		return 1, nil
	})
	require.NoError(t, err)
	assert.Equal(t, context.Background(), got)
	assert.Equal(t, metrics(1, 1, 0), b.Metrics())
}

// The scenario of a slow payment gateway: a bulkhead of 3, 10 concurrent calls of 300 ms: 3 succeed, 7 are
// rejected at once, the gateway receives 3.
func TestBulkheadOfThreeTenConcurrentSlowCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 3})
		var received, succeeded, rejectedAtOnce atomic.Int32
		gateway := func(ctx context.Context) (string, error) {
			received.Add(1)
			time.Sleep(300 * time.Millisecond)
			return "PAID", nil
		}
		start := time.Now()
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				_, err := bulkhead.Execute(context.Background(), b, gateway)
				switch {
				case err == nil:
					succeeded.Add(1)
				case errors.Is(err, bulkhead.ErrBulkheadFull) && time.Since(start) == 0:
					rejectedAtOnce.Add(1)
				}
			})
		}
		wg.Wait()
		assert.Equal(t, int32(3), succeeded.Load())
		assert.Equal(t, int32(7), rejectedAtOnce.Load())
		assert.Equal(t, int32(3), received.Load())
		assert.Equal(t, 300*time.Millisecond, time.Since(start))
		assert.Equal(t, metrics(3, 3, 0), b.Metrics())
	})
}

// nilCodeError's Is method reads its receiver, so a typed nil *nilCodeError returned as an
// error makes errors.Is panic.
type nilCodeError struct{ code int }

func (e *nilCodeError) Error() string { return "code error" }
func (e *nilCodeError) Is(error) bool { return e.code == 404 }

// TestExecuteErrorWhoseIsMethodPanicsReleases: telling the caller's cancellation runs the Is
// methods of the call's error, user code; a panic there must neither crash the caller nor keep
// the permit.
func TestExecuteErrorWhoseIsMethodPanicsReleases(t *testing.T) {
	b := newBulkhead(t, bulkhead.Config{MaxConcurrentCalls: 1})
	ctx, cancel := context.WithCancel(context.Background())
	var typedNil *nilCodeError
	_, err := bulkhead.Execute(ctx, b, func(context.Context) (int, error) {
		cancel()
		return 0, typedNil
	})
	assert.Equal(t, error(typedNil), err)
	assert.Equal(t, metrics(1, 1, 0), b.Metrics())
}
