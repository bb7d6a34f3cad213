package ratelimiter

import "time"

// Metrics is a snapshot of a rate limiter, as Resilience4j's AtomicRateLimiterMetrics.
type Metrics struct {
	// AvailablePermissions is the number of permissions the current cycle can still hand out;
	// negative, minus the number reserved beyond the current cycle, while permissions of later
	// cycles are reserved. Resilience4j's getAvailablePermissions.
	AvailablePermissions int
	// NumberOfWaitingCalls is the number of AcquirePermission calls waiting for reserved
	// permissions. Resilience4j's getNumberOfWaitingThreads.
	NumberOfWaitingCalls int
	// NanosToWait is how long a request for one permission made now would wait (0 when one is
	// free), whether or not that fits in TimeoutDuration. Resilience4j's getNanosToWait.
	NanosToWait time.Duration
	// Cycle is the current cycle, counted from the limiter's creation. Resilience4j's getCycle.
	Cycle int64
}

// Metrics returns a snapshot of the limiter's state now.
func (rl *RateLimiter) Metrics() Metrics {
	if rl.unset() {
		return Metrics{}
	}
	v := rl.look()
	f := v.first()
	m := Metrics{
		AvailablePermissions: int(v.e.start(v.c+1) - f),
		NumberOfWaitingCalls: int(rl.waiting.Load()),
		Cycle:                v.c,
	}
	if k := v.e.cycleOf(f); k > v.c {
		m.NanosToWait = time.Duration(satMul(k-v.c, rl.period) - (v.t - v.c*rl.period))
	}
	return m
}

// RetryAfter is how long a caller refused now should wait before asking again: the wait until
// one permission is free, Metrics().NanosToWait, and 0 when one is free now. It makes the limiter
// a levee.RetryAdvisor, the wait servers send as Retry-After or gRPC pushback. A nil limiter
// returns 0.
func (rl *RateLimiter) RetryAfter() time.Duration { return rl.Metrics().NanosToWait }
