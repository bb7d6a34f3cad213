package timelimiter_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/internal/reject"
	"github.com/levee-go/levee/internal/safe"
	"github.com/levee-go/levee/timelimiter"
)

var errBoom = errors.New("boom")

// recorder collects the events a time limiter publishes.
type recorder struct {
	mu     sync.Mutex
	events []timelimiter.Event
}

func record(tl *timelimiter.TimeLimiter) *recorder {
	r := &recorder{}
	tl.Subscribe(func(e timelimiter.Event) {
		r.mu.Lock()
		r.events = append(r.events, e)
		r.mu.Unlock()
	})
	return r
}

func (r *recorder) get() []timelimiter.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]timelimiter.Event(nil), r.events...)
}

func (r *recorder) types() []timelimiter.EventType {
	var ts []timelimiter.EventType
	for _, e := range r.get() {
		ts = append(ts, e.Type)
	}
	return ts
}

// sleeper is a call that takes d and ignores its context.
func sleeper(d time.Duration, v int, err error) func(context.Context) (int, error) {
	return func(context.Context) (int, error) {
		time.Sleep(d)
		return v, err
	}
}

func TestExecuteReturnsValueInTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl, err := timelimiter.New("inventory", timelimiter.Config{TimeoutDuration: time.Second})
		require.NoError(t, err)
		r := record(tl)
		start := time.Now()
		v, err := timelimiter.Execute(context.Background(), tl, sleeper(300*time.Millisecond, 42, nil))
		require.NoError(t, err)
		assert.Equal(t, 42, v)
		assert.Equal(t, 300*time.Millisecond, time.Since(start))
		assert.Equal(t, []timelimiter.Event{{
			Name: "inventory", Type: timelimiter.EventSuccess, Time: start.Add(300 * time.Millisecond),
			Duration: 300 * time.Millisecond,
		}}, r.get())
		assert.Equal(t, timelimiter.Metrics{NumberOfSuccessfulCalls: 1}, tl.Metrics())
	})
}

func TestExecuteReturnsTheCallsErrorUnchanged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newLimiter(t, timelimiter.Config{TimeoutDuration: time.Second})
		r := record(tl)
		start := time.Now()
		v, err := timelimiter.Execute(context.Background(), tl, sleeper(10*time.Millisecond, 7, errBoom))
		assert.Same(t, errBoom, err)
		assert.Equal(t, 7, v, "the value returned with the error is passed on")
		assert.Equal(t, []timelimiter.Event{{
			Name: "test", Type: timelimiter.EventError, Time: start.Add(10 * time.Millisecond),
			Duration: 10 * time.Millisecond, Err: errBoom,
		}}, r.get())
		assert.Equal(t, timelimiter.Metrics{NumberOfFailedCalls: 1}, tl.Metrics())
	})
}

func TestTimeoutReachesCallerAtDeadlineWhenCallIgnoresContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl, err := timelimiter.New("gateway", timelimiter.Config{TimeoutDuration: time.Second})
		require.NoError(t, err)
		r := record(tl)
		start := time.Now()
		v, err := timelimiter.Execute(context.Background(), tl, sleeper(5*time.Second, 1, nil))
		assert.Equal(t, time.Second, time.Since(start), "the caller does not wait for the call")
		assert.Zero(t, v)
		var te *timelimiter.TimeoutError
		require.ErrorAs(t, err, &te)
		assert.Equal(t, &timelimiter.TimeoutError{Name: "gateway", Timeout: time.Second}, te)
		assert.ErrorIs(t, err, timelimiter.ErrTimeout)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.EqualError(t, err, "timelimiter: TimeLimiter 'gateway' recorded a timeout exception")
		assert.False(t, reject.Is(err), "a timeout is a failure of a call that ran, not a rejection")
		assert.Equal(t, []timelimiter.Event{{
			Name: "gateway", Type: timelimiter.EventTimeout, Time: start.Add(time.Second), Duration: time.Second, Err: err,
		}}, r.get())
		assert.Equal(t, timelimiter.Metrics{NumberOfAbandonedCalls: 1, NumberOfTimedOutCalls: 1}, tl.Metrics())

		time.Sleep(4 * time.Second) // the abandoned call returns; its goroutine ends
		synctest.Wait()
		assert.Equal(t, timelimiter.Metrics{NumberOfTimedOutCalls: 1}, tl.Metrics())
		assert.Len(t, r.get(), 1, "the late result is dropped without an event")
	})
}

func TestTimeoutCancelsTheAttemptContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newLimiter(t, timelimiter.Config{TimeoutDuration: time.Second})
		start := time.Now()
		var sawErr error
		var sawAt time.Duration
		_, err := timelimiter.Execute(context.Background(), tl, func(ctx context.Context) (int, error) {
			dl, ok := ctx.Deadline()
			assert.True(t, ok)
			assert.Equal(t, start.Add(time.Second), dl)
			<-ctx.Done()
			sawErr, sawAt = ctx.Err(), time.Since(start)
			return 0, ctx.Err()
		})
		assert.ErrorIs(t, err, timelimiter.ErrTimeout)
		synctest.Wait()
		assert.Equal(t, context.DeadlineExceeded, sawErr)
		assert.Equal(t, time.Second, sawAt)
		assert.Equal(t, timelimiter.Metrics{NumberOfTimedOutCalls: 1}, tl.Metrics(), "the call stopped: nothing abandoned")
	})
}

func TestDisableCancelRunningFutureLeavesContextUntilCallReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newLimiter(t, timelimiter.Config{TimeoutDuration: time.Second, DisableCancelRunningFuture: true})
		start := time.Now()
		attemptCtx := make(chan context.Context, 1)
		errAfterDeadline := make(chan error, 1)
		_, err := timelimiter.Execute(context.Background(), tl, func(ctx context.Context) (int, error) {
			attemptCtx <- ctx
			_, ok := ctx.Deadline()
			assert.False(t, ok, "the attempt's context carries no deadline")
			time.Sleep(2 * time.Second)
			errAfterDeadline <- ctx.Err()
			return 1, nil
		})
		assert.Equal(t, time.Second, time.Since(start), "the caller still gets the timeout at the deadline")
		assert.ErrorIs(t, err, timelimiter.ErrTimeout)
		actx := <-attemptCtx
		assert.NoError(t, actx.Err())
		assert.Equal(t, 1, tl.Metrics().NumberOfAbandonedCalls)
		assert.NoError(t, <-errAfterDeadline, "the running call was not cancelled")
		synctest.Wait()
		assert.Equal(t, time.Second*2, time.Since(start))
		assert.Equal(t, context.Canceled, actx.Err(), "cancelled once the call returned")
		assert.Zero(t, tl.Metrics().NumberOfAbandonedCalls)
	})
}

// The attempt's context and timer are released when the call returns early, not only on
// timeout: the context is already done when Execute returns.
func TestAttemptContextReleasedWhenCallSucceedsEarly(t *testing.T) {
	for _, disable := range []bool{false, true} {
		t.Run(fmt.Sprintf("DisableCancelRunningFuture=%v", disable), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tl := newLimiter(t, timelimiter.Config{TimeoutDuration: time.Hour, DisableCancelRunningFuture: disable})
				var attemptCtx context.Context
				_, err := timelimiter.Execute(context.Background(), tl, func(ctx context.Context) (int, error) {
					attemptCtx = ctx
					return 1, nil
				})
				require.NoError(t, err)
				assert.Equal(t, context.Canceled, attemptCtx.Err(), "done right after Execute returned")
			})
		})
	}
}

// A call that completes exactly at its deadline yields one outcome and one event, whichever
// goroutine runs first.
func TestCallCompletingExactlyAtDeadlineHasOneOutcome(t *testing.T) {
	calls := map[string]func(context.Context) (int, error){
		"ignores context": sleeper(100*time.Millisecond, 1, nil),
		"honours context": func(ctx context.Context) (int, error) {
			select {
			case <-time.After(100 * time.Millisecond):
				return 1, nil
			case <-ctx.Done():
				return 0, fmt.Errorf("call: %w", ctx.Err())
			}
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tl := newLimiter(t, timelimiter.Config{TimeoutDuration: 100 * time.Millisecond})
				r := record(tl)
				var successes, timeouts int64
				for i := range 200 {
					start := time.Now()
					v, err := timelimiter.Execute(context.Background(), tl, call)
					assert.Equal(t, 100*time.Millisecond, time.Since(start))
					events := r.get()
					require.Len(t, events, i+1, "one event per execution")
					switch last := events[i]; {
					case err == nil:
						successes++
						assert.Equal(t, 1, v)
						assert.Equal(t, timelimiter.EventSuccess, last.Type)
					default:
						timeouts++
						assert.ErrorIs(t, err, timelimiter.ErrTimeout)
						assert.Equal(t, timelimiter.EventTimeout, last.Type)
						assert.Same(t, err, last.Err)
					}
					synctest.Wait()
				}
				t.Logf("%d successes, %d timeouts", successes, timeouts)
				assert.Equal(t, timelimiter.Metrics{NumberOfSuccessfulCalls: successes, NumberOfTimedOutCalls: timeouts}, tl.Metrics())
			})
		})
	}
}

// A call that honours its context and returns the deadline's error is reported as a timeout
// (with its own error kept in the chain when it got there first), never as an ERROR.
func TestCallReturningDeadlineErrorAtDeadlineIsATimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newLimiter(t, timelimiter.Config{TimeoutDuration: 50 * time.Millisecond})
		r := record(tl)
		callErr := errors.New("call")
		for range 50 {
			_, err := timelimiter.Execute(context.Background(), tl, func(ctx context.Context) (int, error) {
				<-ctx.Done()
				return 0, errors.Join(callErr, ctx.Err())
			})
			var te *timelimiter.TimeoutError
			require.ErrorAs(t, err, &te)
			if te.Err != nil {
				assert.ErrorIs(t, err, callErr, "the call's own error stays in the chain")
			}
		}
		for _, e := range r.get() {
			assert.Equal(t, timelimiter.EventTimeout, e.Type)
		}
		synctest.Wait()
		assert.Equal(t, timelimiter.Metrics{NumberOfTimedOutCalls: 50}, tl.Metrics())
	})
}

// A deadline error of the call's own making (a downstream deadline) before the limiter's
// deadline is the call's error, not a timeout.
func TestCallReturningItsOwnDeadlineErrorEarlyIsAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newLimiter(t, timelimiter.Config{TimeoutDuration: time.Second})
		r := record(tl)
		_, err := timelimiter.Execute(context.Background(), tl, sleeper(10*time.Millisecond, 0, context.DeadlineExceeded))
		assert.Equal(t, context.DeadlineExceeded, err)
		assert.NotErrorIs(t, err, timelimiter.ErrTimeout)
		assert.Equal(t, []timelimiter.EventType{timelimiter.EventError}, r.types())
	})
}

func TestPanicInCallBecomesPanicError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newLimiter(t, timelimiter.Config{TimeoutDuration: time.Second})
		r := record(tl)
		_, err := timelimiter.Execute(context.Background(), tl, func(context.Context) (int, error) {
			panic("gateway exploded")
		})
		var pe *safe.PanicError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, "gateway exploded", pe.Value)
		assert.Equal(t, []timelimiter.EventType{timelimiter.EventError}, r.types())
		assert.Equal(t, timelimiter.Metrics{NumberOfFailedCalls: 1}, tl.Metrics())
	})
}

// A panic in a call that has already been abandoned must not crash the process.
func TestPanicInAbandonedCallDoesNotCrash(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newLimiter(t, timelimiter.Config{TimeoutDuration: 10 * time.Millisecond})
		_, err := timelimiter.Execute(context.Background(), tl, func(context.Context) (int, error) {
			time.Sleep(time.Second)
			panic("late")
		})
		assert.ErrorIs(t, err, timelimiter.ErrTimeout)
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, timelimiter.Metrics{NumberOfTimedOutCalls: 1}, tl.Metrics())
	})
}

func TestGoexitInCallIsAnErrorNotASuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newLimiter(t, timelimiter.Config{TimeoutDuration: time.Second})
		start := time.Now()
		_, err := timelimiter.Execute(context.Background(), tl, func(context.Context) (int, error) {
			runtime.Goexit()
			return 1, nil
		})
		assert.EqualError(t, err, "timelimiter: call exited without returning")
		assert.Zero(t, time.Since(start), "the caller learns at once")
		assert.Equal(t, timelimiter.Metrics{NumberOfFailedCalls: 1}, tl.Metrics())
	})
}

func TestExecuteInvalidArguments(t *testing.T) {
	tl := newLimiter(t, timelimiter.Config{})
	r := record(tl)
	_, err := timelimiter.Execute[int](context.Background(), tl, nil)
	assert.ErrorIs(t, err, safe.ErrNilCall)
	_, err = timelimiter.Execute(context.Background(), nil, sleeper(0, 1, nil))
	assert.ErrorIs(t, err, timelimiter.ErrNilTimeLimiter)
	assert.Empty(t, r.get())

	var got context.Context
	//lint:ignore SA1012 a nil context is part of the contract
	v, err := timelimiter.Execute(nil, tl, func(ctx context.Context) (int, error) { //nolint:staticcheck
		got = ctx
		return 3, nil
	})
	require.NoError(t, err)
	assert.Equal(t, 3, v)
	assert.NotNil(t, got)
}

// Execute is stateless per call: each execution, as each attempt of a retry or each item of
// a stream (Resilience4j's per-item TimeLimiter on Flux), gets a fresh deadline.
func TestEachExecutionHasItsOwnDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newLimiter(t, timelimiter.Config{TimeoutDuration: time.Second})
		for range 3 {
			v, err := timelimiter.Execute(context.Background(), tl, sleeper(900*time.Millisecond, 1, nil))
			require.NoError(t, err)
			assert.Equal(t, 1, v)
		}
		// Overlapping executions each measure from their own start.
		var wg sync.WaitGroup
		for i := range 4 {
			time.Sleep(300 * time.Millisecond)
			wg.Go(func() {
				_, err := timelimiter.Execute(context.Background(), tl, sleeper(time.Duration(800+100*i+100*(i/2))*time.Millisecond, 1, nil))
				if i < 2 {
					assert.NoError(t, err)
				} else {
					assert.ErrorIs(t, err, timelimiter.ErrTimeout)
				}
			})
		}
		wg.Wait()
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, timelimiter.Metrics{NumberOfSuccessfulCalls: 5, NumberOfTimedOutCalls: 2}, tl.Metrics())
	})
}

// nilCodeError's Is method reads its receiver, so a typed nil *nilCodeError returned as an
// error makes errors.Is panic.
type nilCodeError struct{ code int }

func (e *nilCodeError) Error() string { return "code error" }
func (e *nilCodeError) Is(error) bool { return e.code == 404 }

// TestErrorWhoseIsMethodPanicsIsAnError: matching the call's error against the deadline runs
// its Is methods, user code; a panic there must not crash the caller.
func TestErrorWhoseIsMethodPanicsIsAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newLimiter(t, timelimiter.Config{TimeoutDuration: time.Second})
		var typedNil *nilCodeError
		_, err := timelimiter.Execute(context.Background(), tl, sleeper(10*time.Millisecond, 0, typedNil))
		assert.Equal(t, error(typedNil), err)
		assert.Equal(t, timelimiter.Metrics{NumberOfFailedCalls: 1}, tl.Metrics())

		// Returned at the deadline: a timeout if the caller saw the deadline first, else the
		// call's error; never a crash.
		_, err = timelimiter.Execute(context.Background(), tl, func(ctx context.Context) (int, error) {
			<-ctx.Done()
			return 0, typedNil
		})
		var te *timelimiter.TimeoutError
		if !errors.As(err, &te) {
			assert.Equal(t, error(typedNil), err)
		}
		synctest.Wait()
		m := tl.Metrics()
		assert.Equal(t, int64(2), m.NumberOfFailedCalls+m.NumberOfTimedOutCalls)
	})
}
