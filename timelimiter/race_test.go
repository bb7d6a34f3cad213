package timelimiter_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/levee-go/levee/timelimiter"
)

// returnThenCancel is a call that returns v and has its caller's context cancelled as soon as
// the attempt is over, that is once its result is stored: a cancellation that comes after the
// result, whichever of the two the caller's goroutine sees first.
func returnThenCancel(v int, cancel context.CancelFunc) func(context.Context) (int, error) {
	return func(attemptCtx context.Context) (int, error) {
		context.AfterFunc(attemptCtx, cancel)
		return v, nil
	}
}

// A call that returned "ok" before its caller cancelled comes back as "ok", recorded as a
// success, with and without DisableCancelRunningFuture.
func TestResultStoredBeforeCallerCancelsWins(t *testing.T) {
	for _, disable := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			tl := newLimiter(t, timelimiter.Config{TimeoutDuration: time.Second, DisableCancelRunningFuture: disable})
			r := record(tl)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			for range 100 {
				ctx, cancel := context.WithCancel(ctx)
				v, err := timelimiter.Execute(ctx, tl, returnThenCancel(7, cancel))
				synctest.Wait()
				assert.Equal(t, context.Canceled, ctx.Err(), "the caller cancelled")
				assert.NoError(t, err)
				assert.Equal(t, 7, v)
			}
			assert.Equal(t, timelimiter.Metrics{NumberOfSuccessfulCalls: 100}, tl.Metrics())
			events := r.get()
			assert.Len(t, events, 100)
			for _, e := range events {
				assert.Equal(t, timelimiter.Event{Name: "test", Type: timelimiter.EventSuccess, Time: e.Time}, e)
			}
		})
	}
}

// 5,000 parallel calls return "ok" while their callers cancel. Those cancelled only once the
// result was stored always get it; those whose callers cancel from inside the call, just
// before it returns, get either the value with a SUCCESS or context.Canceled with nothing
// recorded (the window described in Execute), and the counters agree with what the callers got.
func TestHammerResultBeforeCancellationIsNeverLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newLimiter(t, timelimiter.Config{TimeoutDuration: time.Hour})
		var evSuccess atomic.Int64
		tl.Subscribe(func(e timelimiter.Event) {
			if e.Type == timelimiter.EventSuccess {
				evSuccess.Add(1)
			}
		})
		var afterOK, windowOK, windowCancelled atomic.Int64
		var wg sync.WaitGroup
		for i := range 5000 {
			wg.Go(func() {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if i%2 == 0 {
					v, err := timelimiter.Execute(ctx, tl, returnThenCancel(i, cancel))
					if err != nil || v != i {
						t.Errorf("call %d returned (%d, <nil>) before its caller cancelled: got (%d, %v)", i, i, v, err)
						return
					}
					afterOK.Add(1)
					return
				}
				v, err := timelimiter.Execute(ctx, tl, func(context.Context) (int, error) {
					cancel()
					return i, nil
				})
				switch {
				case err == nil && v == i:
					windowOK.Add(1)
				case errors.Is(err, context.Canceled) && v == 0:
					windowCancelled.Add(1)
				default:
					t.Errorf("call %d: got (%d, %v)", i, v, err)
				}
			})
		}
		wg.Wait()
		synctest.Wait() // every abandoned call has returned
		assert.Equal(t, int64(2500), afterOK.Load())
		assert.Equal(t, int64(2500), windowOK.Load()+windowCancelled.Load())
		ok := afterOK.Load() + windowOK.Load()
		assert.Equal(t, ok, evSuccess.Load())
		assert.Equal(t, timelimiter.Metrics{NumberOfSuccessfulCalls: ok}, tl.Metrics())
		t.Logf("cancelled from inside the call: %d got the value, %d context.Canceled", windowOK.Load(), windowCancelled.Load())
	})
}
