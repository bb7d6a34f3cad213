package leveeredis

import (
	"context"
	"time"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/internal/safe"
)

// Admit is Acquire as a levee.Admitter (its result written as the interface literal
// levee.Permit is an alias of), so that the shared breaker goes where a local one does: a
// levee.Patterns' Admission field (or Pipeline.WithAdmission), the ConcurrencyLimiter field
// of leveehttp.ServerConfig and leveegrpc.ServerConfig, and through them the stream
// operators' PauseWhileOpen. The caller ends the permit exactly once with the call's outcome:
// OnSuccess, OnError (classified by the local breaker's RecordExceptions and
// IgnoreExceptions, as circuitbreaker.Permit.OnError), or Release when the call did not run
// or the caller gave up. A refusal returns the *circuitbreaker.CallNotPermittedError of the
// local breaker or of the fleet's HALF_OPEN trial, a levee rejection, and a nil permit. A nil
// ctx means context.Background(); a nil sb returns circuitbreaker.ErrNilCircuitBreaker.
//
// In CLOSED it makes no round trip. The permit is the local breaker's circuitbreaker.Permit,
// five words, so returning it as an interface value allocates its box (48 bytes) per call,
// which Execute and Decorator do not; a server or a pipeline that can hold the concrete
// *SharedBreaker should use those.
func (sb *SharedBreaker) Admit(ctx context.Context) (interface {
	OnSuccess()
	OnError(err error)
	Release()
}, error) {
	if sb == nil {
		return nil, circuitbreaker.ErrNilCircuitBreaker
	}
	p, err := sb.Acquire(safe.Ctx(ctx))
	if err != nil {
		return nil, err
	}
	return p, nil
}

// RetryAfter returns how long a call refused now should wait before it is tried again, as a
// levee.RetryAdvisor, so that servers answer a refusal with Retry-After or gRPC pushback and a
// paused stream waits for it: an OPEN local breaker's remaining wait
// (circuitbreaker.RemainingWaitInOpenState); in HALF_OPEN, while another replica holds the
// fleet's trial, the time until this replica asks the store again (the end of the answer it
// remembers, at most RetryInterval); 0 in every other case, a breaker that may admit now.
// FORCED_OPEN has no end and returns 0, as the core breaker's RemainingWaitInOpenState. A nil
// sb returns 0.
func (sb *SharedBreaker) RetryAfter() time.Duration {
	if sb == nil {
		return 0
	}
	switch sb.cb.State() {
	case circuitbreaker.Open:
		return sb.cb.RemainingWaitInOpenState()
	case circuitbreaker.HalfOpen:
		rec := sb.known.Load()
		if rec.state != circuitbreaker.Open || sb.dirty.Load() || sb.degraded.Load() {
			return 0
		}
		sb.trialMu.Lock()
		c := sb.trial
		sb.trialMu.Unlock()
		if c.version != rec.version || c.mine {
			return 0
		}
		if left := time.Until(c.until); left > 0 {
			return min(left, sb.cfg.RetryInterval)
		}
	}
	return 0
}

// RetryAfter returns the wait until the next free permission, as the core
// ratelimiter.RateLimiter.RetryAfter: Metrics().NanosToWait, from Redis's last answer (the
// start of the next cycle on Redis's clock when the current one is spent) or, during an
// episode with FallbackToLocal, from the local share; 0 when a permission is free now. It
// makes the shared limiter a levee.RetryAdvisor, so that leveehttp answers its refusals with
// Retry-After, leveegrpc with pushback, and a paused stream waits for the fleet's next cycle.
// It makes no round trip and allocates nothing. A nil rl returns 0.
func (rl *RateLimiter) RetryAfter() time.Duration {
	if rl == nil {
		return 0
	}
	now := rl.redisNow()
	if rl.local != nil && rl.degraded.Load() {
		return rl.local.nanosToWait(now)
	}
	if free := rl.free.Load(); free > now {
		return time.Duration(free-now) * time.Microsecond
	}
	return 0
}
