package levee

import (
	"context"
	"time"
)

// PermissionLimiter is the role of a rate limiter: it grants permissions to start calls at a
// pace, and AcquirePermission waits for n of them or refuses. A pipeline takes one permission
// per run of what is inside it (per retry attempt); a server takes one per request. It is
// Resilience4j's RateLimiter.acquirePermission(n) and what a Patterns' Limiter field, a
// Pipeline's WithPermissionLimiter and a server's Limiter field accept: levee's own
// *ratelimiter.RateLimiter, a rate limiter shared by a fleet (leveeredis.RateLimiter) or one
// of your own.
//
// AcquirePermission returns nil once the permissions are granted (they are consumed: there is
// nothing to give back), a rejection error (one whose LeveeRejection method reports true, as
// ratelimiter.ErrRequestNotPermitted) when they cannot be granted within the limiter's own
// timeout, or an error matching ctx.Err() when ctx ends first. A limiter that can tell when a
// refused caller should come back also implements RetryAdvisor, so that servers answer with
// that wait.
type PermissionLimiter interface {
	AcquirePermission(ctx context.Context, n int) error
}

// Admitter is the role of a pattern that admits or refuses each call and learns from its
// outcome: a circuit breaker shared by a fleet, client-side throttling (throttle.Throttler),
// an adaptive concurrency limit (adaptive.Limiter, PartitionedLimiter). Admit returns a
// Permit for the call, or a rejection error (one whose LeveeRejection method reports true) and
// no permit. The caller ends every permit it was given with exactly one of its methods, which
// is what the pattern learns from. It is Resilience4j's acquirePermission / onSuccess /
// onError / releasePermission, as one value per call.
//
// A Patterns' Admission field and a Pipeline's WithAdmission take an Admitter in a breaker's
// place; a Patterns' ConcurrencyLimiter field, a Pipeline's WithConcurrencyLimiter and a
// server's ConcurrencyLimiter field take one in a bulkhead's place. levee's own breaker and
// bulkhead have fields and methods of their own with an allocation-free path; an Admitter's
// permit is an interface value, which costs the allocation of its box per call when the
// implementation's permit is larger than a pointer.
//
// Admit must honour ctx when it waits and return an error matching ctx.Err() when ctx ends
// first. An Admitter that can tell when a refused caller should come back also implements
// RetryAdvisor.
type Admitter interface {
	Admit(ctx context.Context) (Permit, error)
}

// Permit is the right to run one call, granted by an Admitter. End it exactly once:
// OnSuccess when the call succeeded, OnError with the call's error when it failed (the
// pattern classifies err as its own config says), Release when the call did not run or ended
// without a verdict (the caller's cancellation), which gives the permission back and records
// nothing.
//
// Permit is an alias of an interface literal, so that a pattern can return one without
// importing this package: a method Admit(context.Context) (interface{ OnSuccess(); OnError(error); Release() }, error)
// satisfies Admitter as it is.
type Permit = interface {
	OnSuccess()
	OnError(err error)
	Release()
}

// RetryAdvisor is what a limiter implements when it can say when a caller it refused now
// should come back: RetryAfter is that wait, 0 when it would admit a caller now. Servers
// answer a refusal with it (leveehttp's Retry-After, leveegrpc's pushback) and a paused stream
// waits for it. *ratelimiter.RateLimiter (the wait until its next free permission, its
// Metrics' NanosToWait), adaptive.Limiter and adaptive.PartitionedLimiter implement it.
type RetryAdvisor interface {
	RetryAfter() time.Duration
}

// ReleaseNotifier is what a limiter or admitter implements when it can tell that a permit it
// gave came free: NotifyRelease calls wake, outside the limiter's locks, each time one does,
// until stop is called. A stream or operator held by PauseWhileOpen on the limiter's refusal
// tries again then, as it does when a bulkhead's call finishes: a limiter with no
// RetryAfter to offer (an adaptive one before it measured a call) could otherwise hold an
// element until PauseWhileOpen's maxWait. adaptive.Limiter, adaptive.PartitionedLimiter and
// adaptive.PrioritizedLimiter implement it.
type ReleaseNotifier interface {
	NotifyRelease(wake func()) (stop func())
}
