package operators_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/operators"
)

// halfOpen returns a breaker in HALF_OPEN with one probe permit.
func halfOpen(t *testing.T) *circuitbreaker.CircuitBreaker {
	t.Helper()
	cb := newBreaker(t, circuitbreaker.Config{PermittedNumberOfCallsInHalfOpenState: 1})
	require.NoError(t, cb.TransitionToOpenState())
	require.NoError(t, cb.TransitionToHalfOpenState())
	return cb
}

func TestCircuitBreakerRefusalNeverBuildsTheUpstream(t *testing.T) {
	cb := newBreaker(t, circuitbreaker.Config{})
	require.NoError(t, cb.TransitionToForcedOpenState())
	var builds atomic.Int32
	p := newProbe(1, 2)
	_, items := observe(operators.CircuitBreaker(cb)(operators.Lazy(p.Source(&builds))))
	require.Len(t, items, 1)
	assert.ErrorIs(t, items[0].E, circuitbreaker.ErrCallNotPermitted)
	assert.Equal(t, int32(0), builds.Load())
	assert.Equal(t, int32(0), p.subs.Load())
}

func TestCircuitBreakerRecordsACompletedStreamAsOneSuccess(t *testing.T) {
	cb := newBreaker(t, circuitbreaker.Config{})
	got, _ := observe(operators.CircuitBreaker(cb)(rxgo.Just(1, 2, 3)()))
	assert.Equal(t, []string{"1", "2", "3"}, got)
	m := cb.Metrics()
	assert.Equal(t, 1, m.NumberOfSuccessfulCalls)
	assert.Equal(t, 1, m.NumberOfBufferedCalls)
}

// Resilience4j: a Flux breaker records success only at completion (or on a cancel
// after items), never per item.
func TestFluxBreakerRecordsSuccessOnlyAtCompletion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb := newBreaker(t, circuitbreaker.Config{})
		p := newProbe(1, 2, 3)
		ch := operators.CircuitBreaker(cb)(p.Observable()).Observe()
		assert.Equal(t, 1, (<-ch).V)
		assert.Equal(t, 2, (<-ch).V)
		synctest.Wait()
		assert.Equal(t, 0, cb.Metrics().NumberOfBufferedCalls, "nothing recorded mid-stream")
		assert.Equal(t, 3, (<-ch).V)
		_, open := <-ch
		assert.False(t, open)
		assert.Equal(t, 1, cb.Metrics().NumberOfSuccessfulCalls, "recorded before the end is seen")
	})
}

func TestCircuitBreakerRecordsTheFirstUpstreamErrorAndEndsThere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb := newBreaker(t, circuitbreaker.Config{})
		p := newProbe(1, errBoom, 3)
		got, items := observe(operators.CircuitBreaker(cb)(p.Observable()))
		assert.Equal(t, []string{"1", "E:boom"}, got)
		assert.Same(t, errBoom, items[1].E)
		assert.Equal(t, 1, cb.Metrics().NumberOfFailedCalls)
		synctest.Wait()
		assert.Equal(t, int32(1), p.cancelled.Load(), "the upstream was cancelled after its error")
	})
}

func TestCircuitBreakerCancelBeforeAnyItemReleasesThePermit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb := halfOpen(t)
		p := newProbe()
		p.hang = true
		ctx, cancel := context.WithCancel(context.Background())
		ch := operators.CircuitBreaker(cb)(p.Observable()).Observe(rxgo.WithContext(ctx))
		synctest.Wait()
		assert.ErrorIs(t, tryAcquire(cb), circuitbreaker.ErrCallNotPermitted, "the probe permit is taken")
		cancel()
		for range ch {
		}
		assert.Equal(t, 0, cb.Metrics().NumberOfBufferedCalls, "nothing recorded")
		assert.Equal(t, circuitbreaker.HalfOpen, cb.State())
		assert.NoError(t, tryAcquire(cb), "the probe permit is back")
	})
}

func TestCircuitBreakerCancelAfterAnItemIsASuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb := halfOpen(t)
		p := newProbe(1)
		p.hang = true
		got := take(operators.CircuitBreaker(cb)(p.Observable()), 1)
		assert.Equal(t, []string{"1"}, got)
		assert.Equal(t, circuitbreaker.Closed, cb.State(), "the probe succeeded")
	})
}

func TestCircuitBreakerDoesNotRecordTheConsumersCancellationError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cb := halfOpen(t)
		ctx, cancel := context.WithCancel(context.Background())
		// A source that reports its cancellation as an error item.
		up := rxgo.Defer([]rxgo.Producer{func(c context.Context, next chan<- rxgo.Item) {
			<-c.Done()
			select {
			case next <- rxgo.Error(c.Err()):
			default:
			}
		}}, rxgo.WithBufferedChannel(1))
		ch := operators.CircuitBreaker(cb)(up).Observe(rxgo.WithContext(ctx))
		synctest.Wait()
		cancel()
		for range ch {
		}
		synctest.Wait()
		assert.Equal(t, 0, cb.Metrics().NumberOfBufferedCalls)
		assert.NoError(t, tryAcquire(cb))
	})
}

func TestCircuitBreakerNilFailsEachSubscription(t *testing.T) {
	_, items := observe(operators.CircuitBreaker(nil)(rxgo.Just(1)()))
	require.Len(t, items, 1)
	assert.ErrorIs(t, items[0].E, circuitbreaker.ErrNilCircuitBreaker)
}

func TestCircuitBreakerEachSubscriptionIsOneCall(t *testing.T) {
	cb := newBreaker(t, circuitbreaker.Config{SlidingWindowSize: 4, MinimumNumberOfCalls: 4})
	ok := operators.CircuitBreaker(cb)(rxgo.Just(1, 2)())
	bad := operators.CircuitBreaker(cb)(newProbe(1, errBoom).Observable())
	for _, obs := range []rxgo.Observable{ok, bad, bad, ok} {
		observe(obs)
	}
	m := cb.Metrics()
	assert.Equal(t, 4, m.NumberOfBufferedCalls)
	assert.Equal(t, float32(50), m.FailureRate)
	assert.Equal(t, circuitbreaker.Open, cb.State())
	_, items := observe(ok)
	require.Len(t, items, 1)
	assert.ErrorIs(t, items[0].E, circuitbreaker.ErrCallNotPermitted)
}

// TestCircuitBreakerLatePermitDoesNotEnlargeANewHalfOpenPeriod is the regression test for a
// subscription admitted while CLOSED that ends without telling anything about the dependency
// (cancelled before its first item, or failing with an ignored error) after the breaker entered
// a new HALF_OPEN period: its permission goes back to the CLOSED period that granted it, so the
// HALF_OPEN period still admits exactly its 1 probe, not 2.
func TestCircuitBreakerLatePermitDoesNotEnlargeANewHalfOpenPeriod(t *testing.T) {
	errIgnored := errors.New("ignored by the breaker")
	for _, tc := range []struct {
		name string
		end  func(cancel context.CancelFunc, fail chan<- error)
	}{
		{"cancelled before its first item", func(cancel context.CancelFunc, _ chan<- error) { cancel() }},
		{"failing with an ignored error", func(_ context.CancelFunc, fail chan<- error) { fail <- errIgnored }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cb := newBreaker(t, circuitbreaker.Config{PermittedNumberOfCallsInHalfOpenState: 1,
					IgnoreErrors: []error{errIgnored}})
				fail := make(chan error)
				up := rxgo.Defer([]rxgo.Producer{func(c context.Context, next chan<- rxgo.Item) {
					select {
					case err := <-fail:
						next <- rxgo.Error(err)
					case <-c.Done():
					}
				}})
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				ch := operators.CircuitBreaker(cb)(up).Observe(rxgo.WithContext(ctx))
				synctest.Wait() // admitted while CLOSED, waiting for the dependency
				require.NoError(t, cb.TransitionToOpenState())
				require.NoError(t, cb.TransitionToHalfOpenState())
				tc.end(cancel, fail)
				for range ch {
				}
				synctest.Wait()
				assert.Equal(t, circuitbreaker.HalfOpen, cb.State())
				assert.Equal(t, 0, cb.Metrics().NumberOfBufferedCalls, "nothing recorded")
				require.NoError(t, tryAcquire(cb), "the period's one probe")
				assert.ErrorIs(t, tryAcquire(cb), circuitbreaker.ErrCallNotPermitted, "and no second one")
			})
		})
	}
}
