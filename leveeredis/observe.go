package leveeredis

import "github.com/levee-go/levee/registry"

// The shared patterns join a registry.Registry through the interfaces the core owns, so that
// leveestatus, leveeprom and leveeotel show them beside the local patterns:
//
//	_ = reg.AddSharedRateLimiter(rl)                 // store decisions, episodes, replicas
//	_ = reg.AddCircuitBreaker(rl.StoreCircuitBreaker()) // the store breaker, as any breaker
//	_ = reg.AddSharedCircuitBreaker(sb)              // the shared record's version and origin
//	_ = reg.AddCircuitBreaker(sb.CircuitBreaker())   // the local breaker's calls
var (
	_ registry.StoreLimiter = (*RateLimiter)(nil)
	_ registry.StoreBreaker = (*SharedBreaker)(nil)
)

// StoreLimiterMetrics returns Metrics in the shape of registry.StoreLimiterMetrics, so that
// rl is a registry.StoreLimiter (registry.Registry.AddSharedRateLimiter). A nil rl returns
// the zero value.
func (rl *RateLimiter) StoreLimiterMetrics() registry.StoreLimiterMetrics {
	if rl == nil {
		return registry.StoreLimiterMetrics{}
	}
	m := rl.Metrics()
	return registry.StoreLimiterMetrics{
		Permitted: m.Permitted, Refused: m.Refused, StoreRefused: m.StoreRefused,
		LocalPermitted: m.LocalPermitted, LocalRefused: m.LocalRefused,
		FailOpenPermitted: m.FailOpenPermitted, FailClosedRefused: m.FailClosedRefused,
		StoreFailures: m.StoreFailures, BreakerRejections: m.BreakerRejections,
		Episodes: m.Episodes, Degraded: m.Degraded,
		Replicas: m.Replicas, Replica: rl.cfg.ReplicaID,
		LimitForPeriod: m.LimitForPeriod, FallbackLimitForPeriod: m.FallbackLimitForPeriod,
		AvailablePermissions: m.AvailablePermissions, NumberOfWaitingCalls: m.NumberOfWaitingCalls,
		NanosToWait: m.NanosToWait,
	}
}

// Name returns the name of the local breaker, under which a registry holds sb; "" for a nil
// sb.
func (sb *SharedBreaker) Name() string {
	if sb == nil {
		return ""
	}
	return sb.cb.Name()
}

// StoreBreakerMetrics returns the shared record as this replica last saw it (Record) and
// StoreMetrics in the shape of registry.StoreBreakerMetrics, so that sb is a
// registry.StoreBreaker (registry.Registry.AddSharedCircuitBreaker). It makes no round trip.
// A nil sb returns the zero value.
func (sb *SharedBreaker) StoreBreakerMetrics() registry.StoreBreakerMetrics {
	if sb == nil {
		return registry.StoreBreakerMetrics{}
	}
	r, m := sb.Record(), sb.StoreMetrics()
	return registry.StoreBreakerMetrics{
		State: r.State, Version: r.Version, Origin: r.Origin, Replica: sb.origin,
		Published: m.Published, Adopted: m.Adopted, Conflicts: m.Conflicts,
		StoreErrors: m.StoreErrors, LocalDecisions: m.LocalDecisions, TrialRefusals: m.TrialRefusals,
		StoreAvailable: m.StoreAvailable,
	}
}
