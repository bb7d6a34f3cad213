package circuitbreaker_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cb "github.com/levee-go/levee/circuitbreaker"
)

// retryAfter opens the breaker until the instant a 429 or 503 response's Retry-After names,
// in either of its forms (delay in seconds, or an HTTP date).
func retryAfter(result any, _ error) cb.Transition {
	resp, ok := result.(*http.Response)
	if !ok || resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return cb.Transition{}
	}
	v := resp.Header.Get("Retry-After")
	if secs, err := strconv.Atoi(v); err == nil {
		return cb.OpenFor(time.Duration(secs) * time.Second)
	}
	if at, err := http.ParseTime(v); err == nil {
		return cb.OpenUntil(at)
	}
	return cb.Transition{}
}

func respond(status int, retryAfter string) func(context.Context) (*http.Response, error) {
	return func(context.Context) (*http.Response, error) {
		return &http.Response{StatusCode: status, Header: http.Header{"Retry-After": {retryAfter}}}, nil
	}
}

// TestTransitionOnResultOpensUntilRetryAfter: a 429 whose Retry-After is an HTTP date 30s away
// opens the breaker until exactly that instant; it then refuses every call until the instant
// and lets probes through just after it.
func TestTransitionOnResultOpensUntilRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := small()
		cfg.TransitionOnResult = retryAfter
		b := mustNew(t, cfg)
		ev := record(b)
		time.Sleep(2 * time.Second)
		until := time.Now().Add(30 * time.Second)
		resp, err := cb.Execute(context.Background(), b, respond(http.StatusTooManyRequests, until.UTC().Format(http.TimeFormat)))
		require.NoError(t, err)
		assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "the caller still gets the response")
		assert.Equal(t, cb.Open, b.State())
		assert.Equal(t, []cb.EventType{cb.EventSuccess, cb.EventStateTransition}, ev.types())
		assert.Equal(t, counts{buffered: 1, successful: 1}, countsOf(b.Metrics()), "OPEN keeps the CLOSED window")

		time.Sleep(time.Until(until) - 1)
		assert.ErrorIs(t, try(b), cb.ErrCallNotPermitted, "1ns before the instant")
		time.Sleep(1)
		assert.ErrorIs(t, try(b), cb.ErrCallNotPermitted, "at the instant (permission needs the clock strictly after it)")
		time.Sleep(1)
		require.NoError(t, ok(b), "just after it")
		assert.Equal(t, cb.HalfOpen, b.State())
		assert.Equal(t, []string{"CLOSED>OPEN", "OPEN>HALF_OPEN"}, ev.transitions())
	})
}

// TestTransitionOnResultOpensForADelay: Retry-After in seconds, on a 503 that
// RecordResultPredicate also records as a failure: the breaker still opens for exactly the
// delay, and the attempt number does not grow.
func TestTransitionOnResultOpensForADelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var attempts []int
		cfg := small()
		cfg.WaitDurationInOpenState = 0
		cfg.WaitIntervalFunctionInOpenState = func(a int) time.Duration { attempts = append(attempts, a); return time.Minute }
		cfg.TransitionOnResult = retryAfter
		cfg.RecordResultPredicate = func(r any) bool { return r.(*http.Response).StatusCode >= 500 }
		cfg.AutomaticTransitionFromOpenToHalfOpenEnabled = true
		b := mustNew(t, cfg)
		ev := record(b)
		_, err := cb.Execute(context.Background(), b, respond(http.StatusServiceUnavailable, "120"))
		require.NoError(t, err)
		assert.Equal(t, cb.Open, b.State())
		assert.Equal(t, counts{buffered: 1, failed: 1}, countsOf(b.Metrics()))
		time.Sleep(120*time.Second - 1)
		synctest.Wait()
		assert.Equal(t, cb.Open, b.State())
		time.Sleep(1)
		synctest.Wait()
		assert.Equal(t, cb.HalfOpen, b.State(), "the automatic timer fires at exactly 120s")
		assert.Equal(t, []cb.EventType{cb.EventError, cb.EventStateTransition, cb.EventStateTransition}, ev.types())
		assert.Empty(t, attempts, "OpenFor does not consult the interval function")
		require.NoError(t, b.TransitionToOpenState())
		assert.Equal(t, []int{1}, attempts, "the attempt number had not grown")
	})
}

// TestTransitionOnResultSeesErrorsAndPermitOutcomes: the function gets what Execute's call
// returned, (result, err) from Permit.OnResult and (nil, err) from Permit.OnError, and is not consulted by Permit.OnSuccess, for ignored
// errors or cancelled calls.
func TestTransitionOnResultSeesErrorsAndPermitOutcomes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type seen struct {
			result any
			err    error
		}
		var calls []seen
		cfg := cb.Config{SlidingWindowSize: 100, IgnoreErrors: []error{errInvalid}}
		cfg.TransitionOnResult = func(result any, err error) cb.Transition {
			calls = append(calls, seen{result, err})
			var h *httpError
			if errors.As(err, &h) && h.status == 429 {
				return cb.OpenFor(time.Second)
			}
			return cb.Transition{}
		}
		b := mustNew(t, cfg)
		acquire(t, b).OnSuccess()
		acquire(t, b).OnResult("v", nil)
		acquire(t, b).OnError(errBoom)
		acquire(t, b).OnError(errInvalid)
		ctx, cancel := context.WithCancel(context.Background())
		_, _ = cb.Execute(ctx, b, func(ctx context.Context) (int, error) { cancel(); return 0, ctx.Err() })
		_, _ = cb.Execute(context.Background(), b, func(context.Context) (int, error) { return 7, nil })
		assert.Equal(t, []seen{{"v", nil}, {nil, errBoom}, {7, nil}}, calls)
		assert.Equal(t, cb.Closed, b.State())

		_, err := cb.Execute(context.Background(), b, func(context.Context) (int, error) { return 0, &httpError{429} })
		require.Error(t, err)
		assert.Equal(t, cb.Open, b.State())
		assert.Equal(t, seen{0, &httpError{429}}, calls[3], "Execute passes what the call returned")
	})
}

// TestTransitionOnResultActsOnlyInClosed: as Resilience4j, the answer is applied to the state
// the outcome left the breaker in, and only if it is CLOSED: a HALF_OPEN probe's answer is
// ignored while the period is still undecided, but the probe that closes the breaker has its
// answer applied to the new CLOSED period. An outcome that opened the breaker on its
// thresholds opens it once, for the configured wait.
func TestTransitionOnResultActsOnlyInClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := small()
		cfg.TransitionOnResult = func(any, error) cb.Transition { return cb.OpenFor(time.Hour) }
		b := mustNew(t, cfg)
		ev := record(b)
		require.NoError(t, b.TransitionToOpenState())
		require.NoError(t, b.TransitionToHalfOpenState())
		require.NoError(t, ok(b))
		assert.Equal(t, cb.HalfOpen, b.State(), "the first probe's answer was ignored")
		require.NoError(t, ok(b))
		assert.Equal(t, cb.Open, b.State(), "the closing probe's answer applies to the new CLOSED period")
		assert.Equal(t, []string{"CLOSED>OPEN", "OPEN>HALF_OPEN", "HALF_OPEN>CLOSED", "CLOSED>OPEN"}, ev.transitions())
		time.Sleep(time.Hour)
		assert.ErrorIs(t, try(b), cb.ErrCallNotPermitted)
		time.Sleep(1)
		assert.NoError(t, try(b))

		opens := 0
		cfg.TransitionOnResult = func(any, error) cb.Transition { opens++; return cb.OpenFor(time.Hour) }
		b = mustNew(t, cfg)
		ev = record(b)
		require.ErrorIs(t, fail(b), errBoom)
		require.ErrorIs(t, fail(b), cb.ErrCallNotPermitted)
		assert.Equal(t, 1, opens, "a refused call reports nothing")
		assert.Equal(t, []string{"CLOSED>OPEN"}, ev.transitions(), "the first failure opened it, for an hour")
	})
}

// TestTransitionOnResultAfterAThresholdOpening: the outcome that opens the breaker on its
// failure rate leaves it OPEN for WaitDurationInOpenState; its answer finds no CLOSED period.
func TestTransitionOnResultAfterAThresholdOpening(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errLimited := errors.New("rate limited by the dependency")
		cfg := small()
		cfg.TransitionOnResult = func(_ any, err error) cb.Transition {
			if errors.Is(err, errLimited) {
				return cb.OpenFor(time.Hour)
			}
			return cb.Transition{}
		}
		b := mustNew(t, cfg)
		ev := record(b)
		require.NoError(t, ok(b))
		require.NoError(t, ok(b))
		require.ErrorIs(t, fail(b), errBoom)
		require.ErrorIs(t, run(b, 0, errLimited), errLimited)
		assert.Equal(t, cb.Open, b.State())
		assert.Equal(t, []cb.EventType{cb.EventSuccess, cb.EventSuccess, cb.EventError, cb.EventError,
			cb.EventFailureRateExceeded, cb.EventStateTransition}, ev.types())
		time.Sleep(10 * time.Second)
		assert.ErrorIs(t, try(b), cb.ErrCallNotPermitted)
		time.Sleep(1)
		assert.NoError(t, try(b), "the configured 10s wait, not the hour asked for")
	})
}

// A TransitionOnResult that panics asks for nothing; the call's outcome is still recorded.
func TestTransitionOnResultPanicAsksForNothing(t *testing.T) {
	cfg := small()
	cfg.TransitionOnResult = func(any, error) cb.Transition { panic("bug") }
	b := mustNew(t, cfg)
	require.NoError(t, ok(b))
	assert.Equal(t, cb.Closed, b.State())
	assert.Equal(t, counts{buffered: 1, successful: 1}, countsOf(b.Metrics()))
}

func TestTransitionOpens(t *testing.T) {
	assert.False(t, cb.Transition{}.Opens())
	assert.True(t, cb.OpenFor(0).Opens())
	assert.True(t, cb.OpenUntil(time.Time{}).Opens())
}
