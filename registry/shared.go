package registry

import (
	"time"

	"github.com/levee-go/levee/circuitbreaker"
)

// StoreLimiter is a rate limiter whose permissions live in a store shared by the replicas of
// a fleet, as leveeredis.RateLimiter's live in Redis: what the registry and its observers need
// to show one. The core module cannot import the modules that share state, so it owns this
// interface and those modules' types implement it. Implement it with a pointer type; the
// registry compares instances with ==.
type StoreLimiter interface {
	// Name returns the limiter's name, the key of the registry's namespace.
	Name() string
	// StoreLimiterMetrics returns a snapshot of the limiter's figures. It must be cheap (it is
	// read at every scrape) and safe for concurrent use.
	StoreLimiterMetrics() StoreLimiterMetrics
}

// StoreLimiterMetrics is a snapshot of a StoreLimiter. Counters count since the limiter was
// created; the observers export them as Resilience4j-style decision counts
// (levee_ratelimiter_store_decisions_total{kind}).
type StoreLimiterMetrics struct {
	// Permitted and Refused count the decisions of the store (its shared count).
	Permitted, Refused uint64
	// StoreRefused counts the checks refused because the store failed to answer (outside an
	// episode of unavailability: one slow answer is no outage).
	StoreRefused uint64
	// LocalPermitted and LocalRefused count the decisions of the local share during episodes
	// of unavailability; FailOpenPermitted and FailClosedRefused those of the other failure
	// modes.
	LocalPermitted, LocalRefused         uint64
	FailOpenPermitted, FailClosedRefused uint64
	// StoreFailures counts the round trips to the store that failed; BreakerRejections those
	// the store's circuit breaker refused without trying.
	StoreFailures, BreakerRejections uint64
	// Episodes counts the episodes of unavailability (fallback episodes) begun; Degraded
	// reports one under way.
	Episodes uint64
	Degraded bool
	// Replicas is the number of live replicas last seen in the store (0 until known);
	// Replica is this replica's identifier in the store.
	Replicas int
	Replica  string
	// LimitForPeriod is the fleet's limit per cycle, FallbackLimitForPeriod the configured
	// local share (0: the fleet's limit divided among the replicas).
	LimitForPeriod, FallbackLimitForPeriod int
	// AvailablePermissions and NumberOfWaitingCalls are Resilience4j's RateLimiter.Metrics
	// figures as last known; NanosToWait is the wait of the last refusal.
	AvailablePermissions, NumberOfWaitingCalls int
	NanosToWait                                time.Duration
}

// StoreBreaker is a circuit breaker whose state transitions are shared by the replicas of a
// fleet through a store, as leveeredis.SharedBreaker's: what the registry and its observers
// need to show the shared record. Its local *circuitbreaker.CircuitBreaker is a breaker like
// any other; add it with AddCircuitBreaker to export its calls under Resilience4j's names.
// Implement it with a pointer type; the registry compares instances with ==.
type StoreBreaker interface {
	// Name returns the breaker's name, the key of the registry's namespace.
	Name() string
	// StoreBreakerMetrics returns a snapshot of the shared record as this replica last saw it
	// and of its exchanges with the store. It must be cheap and safe for concurrent use.
	StoreBreakerMetrics() StoreBreakerMetrics
}

// StoreBreakerMetrics is a snapshot of a StoreBreaker.
type StoreBreakerMetrics struct {
	// State, Version and Origin are the shared record's as last seen: the state the fleet
	// agreed on, the record's version (it grows by one per shared transition; 0 before the
	// first) and the replica that decided it ("" before the first).
	State   circuitbreaker.State
	Version int64
	Origin  string
	// Replica is this replica's identifier, the Origin of the records it publishes.
	Replica string
	// Published counts the transitions this replica decided and stored, Adopted those it took
	// from the store, Conflicts those it lost to another replica's.
	Published, Adopted, Conflicts uint64
	// StoreErrors counts the failed exchanges with the store, LocalDecisions the transitions
	// decided locally because the store was unavailable, TrialRefusals the half-open trial
	// calls refused because another replica held the trial.
	StoreErrors, LocalDecisions, TrialRefusals uint64
	// StoreAvailable reports whether the last exchange with the store succeeded.
	StoreAvailable bool
}
