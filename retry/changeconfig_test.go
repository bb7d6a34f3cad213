package retry_test

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
	"github.com/levee-go/levee/retry"
)

func TestChangeConfigValidatesAsNew(t *testing.T) {
	invalid := []retry.Config{
		{MaxAttempts: -1},
		{WaitDuration: -2},
		{WaitDuration: ms, IntervalFunction: func(int) time.Duration { return ms }},
		{MaxDuration: -ms},
		{RetryErrors: []error{nil}},
		{IgnoreErrors: []error{errRejected}},
	}
	for _, cfg := range invalid {
		r := newRetry(t, retry.Config{MaxAttempts: 4, WaitDuration: ms})
		_, newErr := retry.New("test", cfg)
		require.Error(t, newErr)
		assert.EqualError(t, r.ChangeConfig(cfg), newErr.Error())
		assert.Equal(t, retry.Config{MaxAttempts: 4, WaitDuration: ms}, r.Config(), "an invalid config changes nothing")
	}
}

func TestChangeConfigFillsDefaultsAndCopiesLists(t *testing.T) {
	r := newRetry(t, retry.Config{MaxAttempts: 4, WaitDuration: ms})
	list := []error{errGateway}
	require.NoError(t, r.ChangeConfig(retry.Config{RetryErrors: list}))
	list[0] = errInvalid
	assert.Equal(t, retry.Config{MaxAttempts: 3, WaitDuration: 500 * ms, RetryErrors: []error{errGateway}}, r.Config())
	assert.Equal(t, "test", r.Name())
}

func TestChangeConfigNilRetry(t *testing.T) {
	var r *retry.Retry
	assert.ErrorIs(t, r.ChangeConfig(retry.Config{}), retry.ErrNilRetry)
}

// TestChangeConfigAppliesToCallsStartedAfter changes MaxAttempts and WaitDuration during a
// call's first wait: that call ends with the config it started with (3 attempts, 10ms waits),
// the next one uses the new one (5 attempts, 20ms waits).
func TestChangeConfigAppliesToCallsStartedAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetry(t, retry.Config{MaxAttempts: 3, WaitDuration: 10 * ms})
		var attempts atomic.Int64
		call := func(context.Context) (int, error) {
			attempts.Add(1)
			return 0, errGateway
		}
		done := make(chan error, 1)
		start := time.Now()
		go func() {
			_, err := retry.Execute(context.Background(), r, call)
			done <- err
		}()
		time.Sleep(5 * ms)
		require.NoError(t, r.ChangeConfig(retry.Config{MaxAttempts: 5, WaitDuration: 20 * ms}))
		err := <-done
		var mre *retry.MaxRetriesExceededError
		require.ErrorAs(t, err, &mre)
		assert.Equal(t, 3, mre.MaxAttempts)
		assert.Equal(t, 3, mre.Attempts)
		assert.Equal(t, int64(3), attempts.Load())
		assert.Equal(t, 20*ms, time.Since(start))

		attempts.Store(0)
		start = time.Now()
		_, err = retry.Execute(context.Background(), r, call)
		require.ErrorAs(t, err, &mre)
		assert.Equal(t, 5, mre.MaxAttempts)
		assert.Equal(t, int64(5), attempts.Load())
		assert.Equal(t, 80*ms, time.Since(start))
		assert.Equal(t, retry.Metrics{NumberOfFailedCallsWithRetryAttempt: 2, NumberOfTotalCalls: 8}, r.Metrics())
	})
}

// TestChangeConfigContextKeepsItsConfig drives a Context by hand across a change of the
// classification: the Context made before keeps retrying errGateway, one made after does not.
func TestChangeConfigContextKeepsItsConfig(t *testing.T) {
	r := newRetry(t, retry.Config{MaxAttempts: 2, WaitDuration: retry.NoWait})
	before := r.NewContext()
	require.NoError(t, r.ChangeConfig(retry.Config{MaxAttempts: 4, WaitDuration: 7 * ms, IgnoreErrors: []error{errGateway}}))
	after := r.NewContext()

	wait, again := before.OnError(errGateway)
	assert.Equal(t, time.Duration(0), wait)
	assert.True(t, again)
	_, again = before.OnError(errGateway)
	assert.False(t, again)
	var mre *retry.MaxRetriesExceededError
	require.ErrorAs(t, before.Err(), &mre)
	assert.Equal(t, 2, mre.MaxAttempts)

	_, again = after.OnError(errGateway)
	assert.False(t, again)
	assert.Same(t, errGateway, after.Err(), "ignored under the new config")
}

func TestChangeConfigReplacesTheLogger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h1, logger1 := logtest.New(slog.LevelDebug)
		h2, logger2 := logtest.New(slog.LevelDebug)
		r, err := retry.New("payment", retry.Config{MaxAttempts: 2, WaitDuration: ms, Logger: logger1})
		require.NoError(t, err)
		fails := func(context.Context) (int, error) { return 0, errGateway }

		require.NoError(t, r.ChangeConfig(r.Config())) // the same logger: still one consumer
		_, _ = retry.Execute(context.Background(), r, fails)
		assert.Len(t, h1.Records(), 2, "one RETRY and one ERROR record, not two of each")

		cfg := r.Config()
		assert.Same(t, logger1, cfg.Logger)
		cfg.Logger = logger2
		require.NoError(t, r.ChangeConfig(cfg))
		_, _ = retry.Execute(context.Background(), r, fails)
		assert.Len(t, h1.Records(), 2, "the old logger logs no more")
		assert.Equal(t, []logtest.Record{
			{Level: slog.LevelDebug, Msg: "retry attempt failed",
				Attrs: retryAttrs("RETRY", map[string]any{"attempt": int64(1), "wait": ms, "err": errGateway})},
			{Level: slog.LevelInfo, Msg: "retries exhausted",
				Attrs: retryAttrs("ERROR", map[string]any{"attempt": int64(2), "err": errGateway})},
		}, h2.Records())

		cfg.Logger = nil
		require.NoError(t, r.ChangeConfig(cfg))
		_, _ = retry.Execute(context.Background(), r, fails)
		assert.Len(t, h2.Records(), 2, "nil stops the logging")
		assert.Len(t, h1.Records(), 2)
	})
}

// TestChangeConfigHammer has 32 goroutines call while another switches the config between two
// shapes: every call sees one of them wholly, its attempts and its waits from the same config.
func TestChangeConfigHammer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := retry.Config{MaxAttempts: 2, WaitDuration: ms}
		b := retry.Config{MaxAttempts: 4, WaitDuration: 3 * ms}
		r := newRetry(t, a)
		var wg sync.WaitGroup
		var seenA, seenB, torn atomic.Int64
		stop := make(chan struct{})
		for range 32 {
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					n := 0
					start := time.Now()
					_, err := retry.Execute(context.Background(), r, func(context.Context) (int, error) {
						n++
						return 0, errGateway
					})
					elapsed := time.Since(start)
					var mre *retry.MaxRetriesExceededError
					switch {
					case !errors.As(err, &mre):
						torn.Add(1)
					case n == 2 && mre.MaxAttempts == 2 && elapsed == ms:
						seenA.Add(1)
					case n == 4 && mre.MaxAttempts == 4 && elapsed == 9*ms:
						seenB.Add(1)
					default:
						torn.Add(1)
					}
					time.Sleep(time.Duration(i%3) * ms)
				}
			})
		}
		for i := range 200 {
			time.Sleep(ms)
			cfg := a
			if i%2 == 0 {
				cfg = b
			}
			require.NoError(t, r.ChangeConfig(cfg))
		}
		close(stop)
		wg.Wait()
		assert.Zero(t, torn.Load())
		assert.Positive(t, seenA.Load())
		assert.Positive(t, seenB.Load())
		m := r.Metrics()
		assert.Equal(t, seenA.Load()+seenB.Load(), m.NumberOfFailedCallsWithRetryAttempt)
		assert.Equal(t, 2*seenA.Load()+4*seenB.Load(), m.NumberOfTotalCalls)
	})
}
