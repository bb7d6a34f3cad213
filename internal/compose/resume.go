package compose

import (
	"time"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/internal/reject"
)

// Refused reports whether a call that returned err with outcome o was refused by a levee
// pattern: err is a rejection, or a fallback answered one.
func Refused(err error, o fallback.Outcome) bool {
	return reject.Is(err) || o.Fallback && reject.Is(o.Cause)
}

// CanRefuse reports whether c holds a pattern that refuses calls (a breaker, a rate limiter or
// a bulkhead, or a limiter or admitter of another kind that says when to come back, a
// levee.RetryAdvisor): only then may PauseWhileOpen hold an element. A rejection that the guarded
// function itself returns, through a pipeline with no such pattern, is no refusal of the
// pipeline, and nothing of it could end the wait. A nil c refuses nothing.
func (c *Chain[T]) CanRefuse() bool {
	if c == nil {
		return false
	}
	for i := range c.layers {
		switch c.layers[i].kind {
		case kindCircuitBreaker, kindRateLimiter, kindBulkhead:
			return true
		case kindPermissions:
			// Another kind of limiter can end a pause only by the clock: nothing of it is
			// watched, so one that cannot say when (no RetryAdvisor) could hold an element
			// for ever.
			if _, ok := c.layers[i].pl.(retryAdvisor); ok {
				return true
			}
		case kindAdmission:
			if _, ok := c.layers[i].ad.(retryAdvisor); ok {
				return true
			}
			if _, ok := c.layers[i].ad.(releaseNotifier); ok {
				return true
			}
		}
	}
	return false
}

// Watch subscribes wake to the events of c's patterns that may end a refusal: a breaker's
// state transition or reset or ignored error (a permission given back), a bulkhead's finished
// call, a permit of a limiter or admitter that notifies releases (levee.ReleaseNotifier)
// coming free. stop unsubscribes it. A nil c watches nothing.
func (c *Chain[T]) Watch(wake func()) (stop func()) {
	if c == nil {
		return func() {}
	}
	var stops []func()
	for i := range c.layers {
		l := &c.layers[i]
		switch l.kind {
		case kindCircuitBreaker:
			stops = append(stops, l.cb.Subscribe(func(e circuitbreaker.Event) {
				// An ignored error gives its permission back without a transition: a
				// HALF_OPEN probe's, which the held element may now take.
				switch e.Type {
				case circuitbreaker.EventStateTransition, circuitbreaker.EventReset, circuitbreaker.EventIgnoredError:
					wake()
				}
			}))
		case kindBulkhead:
			stops = append(stops, l.bh.Subscribe(func(e bulkhead.Event) {
				if e.Type == bulkhead.EventCallFinished {
					wake()
				}
			}))
		case kindPermissions:
			if n, ok := l.pl.(releaseNotifier); ok {
				stops = append(stops, n.NotifyRelease(wake))
			}
		case kindAdmission:
			if n, ok := l.ad.(releaseNotifier); ok {
				stops = append(stops, n.NotifyRelease(wake))
			}
		}
	}
	return func() {
		for _, s := range stops {
			s()
		}
	}
}

// RetryAfter returns the time after which the patterns of c that refuse by the clock may
// permit again: the largest of an OPEN breaker's remaining wait
// (circuitbreaker.RemainingWaitInOpenState) and a rate limiter's time to its next permission
// (ratelimiter.Metrics.NanosToWait), and the RetryAfter of every other limiter or admitter that
// has one (levee.RetryAdvisor); 0 when none has such a wait. A nil c returns 0.
func (c *Chain[T]) RetryAfter() (after time.Duration) {
	if c == nil {
		return 0
	}
	for i := range c.layers {
		l := &c.layers[i]
		switch l.kind {
		case kindCircuitBreaker:
			after = max(after, l.cb.RemainingWaitInOpenState())
		case kindRateLimiter:
			after = max(after, l.rl.Metrics().NanosToWait)
		case kindPermissions:
			if r, ok := l.pl.(retryAdvisor); ok {
				after = max(after, r.RetryAfter())
			}
		case kindAdmission:
			if r, ok := l.ad.(retryAdvisor); ok {
				after = max(after, r.RetryAfter())
			}
		}
	}
	return after
}

// Retries reports whether c holds a Retry: only then may a call through c make more than one
// attempt (a Decorator of the caller's own may too, unseen). A nil c does not retry.
func (c *Chain[T]) Retries() bool {
	if c == nil {
		return false
	}
	for i := range c.layers {
		if c.layers[i].kind == kindRetry {
			return true
		}
	}
	return false
}
