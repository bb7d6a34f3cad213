package leveetest

import (
	"testing"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/circuitbreaker"
)

// VerifyIdle fails the test (t.Errorf, one line per finding) when a pattern of ps, or one of
// pools, still holds something that the calls of a finished test should have given back:
//
//   - Bulkhead: AvailableConcurrentCalls below MaxAllowedConcurrentCalls (a permit held), or
//     a caller still waiting for one (NumberOfWaitingCalls).
//   - CircuitBreaker in HALF_OPEN: a probe permit neither reported nor released. The breaker's
//     Metrics do not show permits in flight, so VerifyIdle takes every free probe permit with
//     Acquire and releases each at once (Permit.Release records and publishes nothing): all of
//     PermittedNumberOfCallsInHalfOpenState minus the probes already recorded must be free.
//     A missing one is reported, and leaves a NOT_PERMITTED event and a not-permitted count.
//     Other states lend no permit that could leak.
//   - RateLimiter: a caller still waiting for a permission (NumberOfWaitingCalls).
//   - TimeLimiter: a call abandoned at its deadline that has not returned yet
//     (NumberOfAbandonedCalls), i.e. a goroutine still running the dependency.
//   - WorkerPool: a task running (ActiveThreadCount) or queued (QueueDepth).
//
// Retry and Fallback hold nothing between calls. VerifyIdle reads the patterns once, so call
// it once the test's calls have returned; inside a testing/synctest bubble, call synctest.Wait
// first. It reports whether everything was idle. Goroutines are not its business: pair it
// with go.uber.org/goleak (see the package documentation).
func VerifyIdle(t testing.TB, ps levee.Patterns, pools ...*async.WorkerPool) bool {
	t.Helper()
	idle := true
	fail := func(format string, args ...any) {
		t.Helper()
		idle = false
		t.Errorf(format, args...)
	}
	if b := ps.Bulkhead; b != nil {
		m := b.Metrics()
		if held := m.MaxAllowedConcurrentCalls - m.AvailableConcurrentCalls; held > 0 {
			fail("leveetest: bulkhead %q holds %d permit(s): %d of %d available", b.Name(), held, m.AvailableConcurrentCalls, m.MaxAllowedConcurrentCalls)
		}
		if m.NumberOfWaitingCalls != 0 {
			fail("leveetest: bulkhead %q has %d waiting call(s)", b.Name(), m.NumberOfWaitingCalls)
		}
	}
	if cb := ps.CircuitBreaker; cb != nil {
		if held, want := heldProbes(cb); held > 0 {
			fail("leveetest: circuit breaker %q holds %d HALF_OPEN probe permit(s): %d of %d free", cb.Name(), held, want-held, want)
		}
	}
	if rl := ps.RateLimiter; rl != nil {
		if n := rl.Metrics().NumberOfWaitingCalls; n != 0 {
			fail("leveetest: rate limiter %q has %d waiting call(s)", rl.Name(), n)
		}
	}
	if tl := ps.TimeLimiter; tl != nil {
		if n := tl.Metrics().NumberOfAbandonedCalls; n != 0 {
			fail("leveetest: time limiter %q has %d abandoned call(s) still running", tl.Name(), n)
		}
	}
	for _, p := range pools {
		if p == nil {
			continue
		}
		m := p.Metrics()
		if m.ActiveThreadCount != 0 || m.QueueDepth != 0 {
			fail("leveetest: worker pool %q has %d running and %d queued task(s)", p.Name(), m.ActiveThreadCount, m.QueueDepth)
		}
	}
	return idle
}

// heldProbes returns how many of the probe permits a HALF_OPEN cb should have free are not,
// and how many it should have free; (0, 0) in every other state.
func heldProbes(cb *circuitbreaker.CircuitBreaker) (held, want int) {
	m := cb.Metrics()
	if m.State != circuitbreaker.HalfOpen {
		return 0, 0
	}
	want = cb.Config().PermittedNumberOfCallsInHalfOpenState - m.NumberOfBufferedCalls
	permits := make([]circuitbreaker.Permit, 0, want)
	for range want {
		p, err := cb.Acquire()
		if err != nil {
			break
		}
		permits = append(permits, p)
	}
	for _, p := range permits {
		p.Release()
	}
	return want - len(permits), want
}
