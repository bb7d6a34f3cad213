package timelimiter_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/internal/logging/logtest"
	"github.com/levee-go/levee/timelimiter"
)

func TestChangeConfigValidatesAsNew(t *testing.T) {
	tl := newLimiter(t, timelimiter.Config{TimeoutDuration: 2 * time.Second})
	_, newErr := timelimiter.New("test", timelimiter.Config{TimeoutDuration: -time.Second})
	require.Error(t, newErr)
	assert.EqualError(t, tl.ChangeConfig(timelimiter.Config{TimeoutDuration: -time.Second}), newErr.Error())
	assert.Equal(t, "timelimiter: TimeoutDuration must be > 0, got -1s", newErr.Error())
	assert.Equal(t, timelimiter.Config{TimeoutDuration: 2 * time.Second}, tl.Config(), "an invalid config changes nothing")

	require.NoError(t, tl.ChangeConfig(timelimiter.Config{DisableCancelRunningFuture: true}))
	assert.Equal(t, timelimiter.Config{TimeoutDuration: time.Second, DisableCancelRunningFuture: true}, tl.Config(), "defaults filled in")

	var nilTL *timelimiter.TimeLimiter
	assert.ErrorIs(t, nilTL.ChangeConfig(timelimiter.Config{}), timelimiter.ErrNilTimeLimiter)
}

// waiter returns a call that reports, on cancelled, after how long its context was cancelled
// (or -1 when it was not within d), then returns: the context's error, or 1.
func waiter(d time.Duration, cancelled chan<- time.Duration) func(context.Context) (int, error) {
	return func(ctx context.Context) (int, error) {
		start := time.Now()
		select {
		case <-ctx.Done():
			cancelled <- time.Since(start)
			return 0, ctx.Err()
		case <-time.After(d):
			cancelled <- -1
		}
		return 1, nil
	}
}

// TestChangeConfigAppliesToCallsStartedAfter changes the timeout and cancelRunningFuture while
// a call runs: that call times out with its own config, the next one with the new config.
func TestChangeConfigAppliesToCallsStartedAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newLimiter(t, timelimiter.Config{TimeoutDuration: 100 * time.Millisecond})
		cancelled := make(chan time.Duration, 1)
		time.AfterFunc(10*time.Millisecond, func() {
			assert.NoError(t, tl.ChangeConfig(timelimiter.Config{TimeoutDuration: time.Second, DisableCancelRunningFuture: true}))
		})
		start := time.Now()
		_, err := timelimiter.Execute(context.Background(), tl, waiter(5*time.Second, cancelled))
		var te *timelimiter.TimeoutError
		require.ErrorAs(t, err, &te)
		assert.Equal(t, 100*time.Millisecond, te.Timeout)
		assert.Equal(t, 100*time.Millisecond, time.Since(start))
		assert.Equal(t, 100*time.Millisecond, <-cancelled, "cancelled at its deadline, as configured when it started")

		start = time.Now()
		_, err = timelimiter.Execute(context.Background(), tl, waiter(5*time.Second, cancelled))
		require.ErrorAs(t, err, &te)
		assert.Equal(t, time.Second, te.Timeout)
		assert.Equal(t, time.Second, time.Since(start))
		assert.Equal(t, time.Duration(-1), <-cancelled, "left running: DisableCancelRunningFuture")
		assert.Equal(t, timelimiter.Metrics{NumberOfTimedOutCalls: 2}, tl.Metrics())
	})
}

func TestChangeConfigReplacesTheLogger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h1, logger1 := logtest.New(slog.LevelDebug)
		h2, logger2 := logtest.New(slog.LevelDebug)
		tl, err := timelimiter.New("payment", timelimiter.Config{TimeoutDuration: time.Second, Logger: logger1})
		require.NoError(t, err)
		slow := sleeper(2*time.Second, 1, nil)

		require.NoError(t, tl.ChangeConfig(tl.Config()))
		_, _ = timelimiter.Execute(context.Background(), tl, slow)
		assert.Len(t, h1.Records(), 1, "the same logger keeps one consumer")

		require.NoError(t, tl.ChangeConfig(timelimiter.Config{TimeoutDuration: time.Second, Logger: logger2}))
		assert.Same(t, logger2, tl.Config().Logger)
		_, timeout := timelimiter.Execute(context.Background(), tl, slow)
		assert.Len(t, h1.Records(), 1)
		assert.Equal(t, []logtest.Record{
			{Level: slog.LevelDebug, Msg: "time limiter call timed out", Attrs: map[string]any{
				"pattern": "timelimiter", "name": "payment", "event": "TIMEOUT", "err": timeout}},
		}, h2.Records())

		require.NoError(t, tl.ChangeConfig(timelimiter.Config{TimeoutDuration: time.Second}))
		_, _ = timelimiter.Execute(context.Background(), tl, slow)
		assert.Len(t, h1.Records(), 1)
		assert.Len(t, h2.Records(), 1, "nil stops the logging")
		time.Sleep(2 * time.Second) // the abandoned calls end
	})
}

// TestChangeConfigHammer has 32 goroutines call while another switches between two configs:
// every call times out at the timeout its error reports and is cancelled there or not as that
// same config says.
func TestChangeConfigHammer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := timelimiter.Config{TimeoutDuration: 100 * time.Millisecond}
		b := timelimiter.Config{TimeoutDuration: 300 * time.Millisecond, DisableCancelRunningFuture: true}
		tl := newLimiter(t, a)
		var seenA, seenB, torn atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for g := range 32 {
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					cancelled := make(chan time.Duration, 1)
					start := time.Now()
					_, err := timelimiter.Execute(context.Background(), tl, waiter(400*time.Millisecond, cancelled))
					elapsed := time.Since(start)
					at := <-cancelled
					var te *timelimiter.TimeoutError
					switch {
					case !errors.As(err, &te) || te.Timeout != elapsed:
						torn.Add(1)
					case elapsed == 100*time.Millisecond && at == 100*time.Millisecond:
						seenA.Add(1)
					case elapsed == 300*time.Millisecond && at == -1:
						seenB.Add(1)
					default:
						torn.Add(1)
					}
					time.Sleep(time.Duration((g+i)%7) * time.Millisecond)
				}
			})
		}
		for i := range 100 {
			time.Sleep(17 * time.Millisecond)
			cfg := a
			if i%2 == 0 {
				cfg = b
			}
			require.NoError(t, tl.ChangeConfig(cfg))
		}
		close(stop)
		wg.Wait()
		assert.Zero(t, torn.Load())
		assert.Positive(t, seenA.Load())
		assert.Positive(t, seenB.Load())
		assert.Equal(t, timelimiter.Metrics{NumberOfTimedOutCalls: seenA.Load() + seenB.Load()}, tl.Metrics())
	})
}
