package retry_test

// How a retry treats a rejection by levee's own patterns: classified by RetryRejections alone,
// never by RetryErrors, IgnoreErrors or a user predicate.

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/retry"
)

var errBadRequest = errors.New("400 bad request")

// breakerRun is what one Retry(CircuitBreaker(dependency)) call did.
type breakerRun struct {
	err        error
	attempts   int // calls of the breaker inside the retry
	rejected   int // of which the breaker refused
	dependency int // calls that reached the dependency
	predicate  int // calls of RetryOnErrorPredicate
	elapsed    time.Duration
	metrics    retry.Metrics
}

// runThroughForcedOpenBreaker runs one call through Retry(CircuitBreaker(dependency)) with the
// breaker FORCED_OPEN, and the retry predicate written the natural Go way: retry everything
// except a bad request. The retry waits its default 500ms.
func runThroughForcedOpenBreaker(t *testing.T, rejections []error) breakerRun {
	t.Helper()
	var run breakerRun
	synctest.Test(t, func(t *testing.T) {
		cb, err := circuitbreaker.New("payment", circuitbreaker.Config{InitialState: circuitbreaker.ForcedOpen})
		require.NoError(t, err)
		r := newRetry(t, retry.Config{
			RetryOnErrorPredicate: func(err error) bool {
				run.predicate++
				return !errors.Is(err, errBadRequest)
			},
			RetryRejections: rejections,
		})
		dependency := func(context.Context) (string, error) {
			run.dependency++
			return "PAID", nil
		}
		start := time.Now()
		_, run.err = retry.Execute(context.Background(), r, func(ctx context.Context) (string, error) {
			run.attempts++
			v, err := circuitbreaker.Execute(ctx, cb, dependency)
			if errors.Is(err, circuitbreaker.ErrCallNotPermitted) {
				run.rejected++
			}
			return v, err
		})
		run.elapsed = time.Since(start)
		run.metrics = r.Metrics()
	})
	return run
}

// TestOpenBreakerRejectionIsNotRetriedByACatchAllPredicate is the pitfall of a predicate that
// retries "everything but a bad request": it never sees the breaker's rejection, which comes
// back at once, after one attempt and no wait.
func TestOpenBreakerRejectionIsNotRetriedByACatchAllPredicate(t *testing.T) {
	run := runThroughForcedOpenBreaker(t, nil)

	var cnp *circuitbreaker.CallNotPermittedError
	require.ErrorAs(t, run.err, &cnp, "the breaker's own error, not wrapped")
	assert.Equal(t, circuitbreaker.CallNotPermittedError{Name: "payment", State: circuitbreaker.ForcedOpen}, *cnp)
	assert.ErrorIs(t, run.err, circuitbreaker.ErrCallNotPermitted)
	assert.NotErrorIs(t, run.err, retry.ErrMaxRetriesExceeded)
	assert.Equal(t, 1, run.attempts)
	assert.Equal(t, 1, run.rejected)
	assert.Equal(t, 0, run.dependency)
	assert.Equal(t, 0, run.predicate, "the predicate never sees a rejection")
	assert.Equal(t, time.Duration(0), run.elapsed, "no wait")
	assert.Equal(t, metrics(0, 0, 1, 0, 1), run.metrics)
}

// TestOpenBreakerRejectionRetriedWhenListed: Resilience4j's behaviour, one line away. The
// three attempts are all refused, 500ms apart, and the call ends exhausted on the rejection.
func TestOpenBreakerRejectionRetriedWhenListed(t *testing.T) {
	run := runThroughForcedOpenBreaker(t, []error{circuitbreaker.ErrCallNotPermitted})

	var mre *retry.MaxRetriesExceededError
	require.ErrorAs(t, run.err, &mre)
	assert.Equal(t, 3, mre.Attempts)
	assert.Equal(t, 3, mre.MaxAttempts)
	assert.ErrorIs(t, run.err, circuitbreaker.ErrCallNotPermitted)
	assert.EqualError(t, run.err, "retry: Retry 'test' has exhausted all attempts (3): "+
		"circuitbreaker: CircuitBreaker 'payment' is FORCED_OPEN and does not permit further calls")
	assert.Equal(t, 3, run.attempts)
	assert.Equal(t, 3, run.rejected)
	assert.Equal(t, 0, run.dependency)
	assert.Equal(t, 0, run.predicate, "listed rejections do not go through the predicate either")
	assert.Equal(t, time.Second, run.elapsed, "two waits of 500ms")
	assert.Equal(t, metrics(0, 0, 0, 1, 3), run.metrics)
}

// TestRejectionAfterRetriedErrorsEndsAtOnce: a breaker that opens during the retry ends it at
// the first refusal, returned as it is, counted as failed without retry as Resilience4j counts
// a non-retried error.
func TestRejectionAfterRetriedErrorsEndsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb, err := circuitbreaker.New("payment", circuitbreaker.Config{})
		require.NoError(t, err)
		r := newRetry(t, retry.Config{MaxAttempts: 5, WaitDuration: 100 * ms})
		rec := record(t, r)
		calls := 0
		start := time.Now()
		_, err = retry.Execute(context.Background(), r, func(ctx context.Context) (string, error) {
			calls++
			if calls == 2 {
				require.NoError(t, cb.TransitionToOpenState())
			}
			return circuitbreaker.Execute(ctx, cb, func(context.Context) (string, error) { return "", errGateway })
		})
		var cnp *circuitbreaker.CallNotPermittedError
		require.ErrorAs(t, err, &cnp)
		assert.Equal(t, circuitbreaker.Open, cnp.State)
		assert.Equal(t, 2, calls)
		assert.Equal(t, 100*ms, time.Since(start), "one wait, before the refused attempt")
		assert.Equal(t, metrics(0, 0, 1, 0, 2), r.Metrics())
		assert.Equal(t, []retry.EventType{retry.EventRetry, retry.EventIgnoredError}, rec.types())
	})
}

// TestRejectionNeverReachesTheErrorLists: a rejection that also matches RetryErrors,
// IgnoreErrors and the predicate (through a type and a wrapped error) is classified by
// RetryRejections alone.
func TestRejectionNeverReachesTheErrorLists(t *testing.T) {
	wrapped := &httpError{Status: 503}
	rejected := errors.Join(errRejected, wrapped) // a rejection whose chain also holds an *httpError
	require.True(t, levee.IsRejection(rejected))
	seen := 0
	predicate := func(error) bool { seen++; return true }
	for _, listed := range []bool{false, true} {
		cfg := retry.Config{
			MaxAttempts:           3,
			WaitDuration:          retry.NoWait,
			RetryErrors:           []error{levee.ErrorType[*httpError]()},
			RetryOnErrorPredicate: predicate,
		}
		if listed {
			cfg.RetryRejections = []error{levee.ErrorType[*rejection]()}
			cfg.IgnoreErrors = []error{levee.ErrorType[*httpError]()} // would refuse it, were it asked
			cfg.RetryErrors = nil
		}
		r := newRetry(t, cfg)
		s := newScript(fail(rejected))
		_, err := retry.Execute(context.Background(), r, s.call)
		if listed {
			assert.ErrorIs(t, err, retry.ErrMaxRetriesExceeded)
			assert.Equal(t, 3, s.count())
		} else {
			assert.Same(t, rejected, err)
			assert.Equal(t, 1, s.count())
		}
	}
	assert.Equal(t, 0, seen)
}

// TestRejectionEndsWithoutAllocating: a rejection not retried comes back allocating nothing.
func TestRejectionEndsWithoutAllocating(t *testing.T) {
	r := newRetry(t, retry.Config{RetryOnErrorPredicate: func(error) bool { return true }})
	ctx := context.Background()
	call := func(context.Context) (int, error) { return 0, circuitbreaker.ErrCallNotPermitted }
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := retry.Execute(ctx, r, call); err != circuitbreaker.ErrCallNotPermitted {
			panic(err)
		}
	})
	assert.Zero(t, allocs)
	assert.Equal(t, int64(1001), r.Metrics().NumberOfFailedCallsWithoutRetryAttempt)
}
