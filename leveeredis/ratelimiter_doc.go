// Package leveeredis shares levee's state between the replicas of a service through Redis,
// with the caller's own go-redis client (github.com/redis/go-redis/v9; a redis.UniversalClient:
// Client, ClusterClient, Ring or failover client). It lives in a module of its own so that
// programs that never use Redis never download go-redis.
//
// Two things are shared: a rate limiter's permissions (RateLimiter, below) and a circuit
// breaker's transitions (SharedBreaker).
//
// # Shared rate limiter
//
// NewRateLimiter returns a RateLimiter whose permissions live in one Redis key shared by every
// replica using the same name: a partner API allowing 50 calls per second receives at most 50
// from the whole fleet.
//
//	rl, err := leveeredis.NewRateLimiter(client, "partner-api", leveeredis.Config{
//		LimitForPeriod:     50,
//		LimitRefreshPeriod: time.Second,
//		TimeoutDuration:    200 * time.Millisecond,
//	})
//	...
//	defer rl.Close()
//	quote, err := leveeredis.ExecuteRateLimiter(ctx, rl, partner.Quote)
//
// Each check is one Lua script, atomic in Redis, that reads Redis's own clock (TIME), so the
// replicas' clocks never matter. The default algorithm, Cycles, is Resilience4j's
// AtomicRateLimiter, as the core ratelimiter package implements it: LimitForPeriod permissions
// per cycle, unused ones lost, permissions of later cycles reservable within TimeoutDuration,
// negative available permissions while they are reserved, a waiter whose context ends giving
// its reservation back when no grant followed it, requests for n permissions in
// [1, LimitForPeriod]. Cycles are aligned on multiples of LimitRefreshPeriod since the Unix
// epoch (Resilience4j counts them from the limiter's creation; a fleet has no single
// creation); a core ratelimiter.RateLimiter with the same Config created on such a multiple
// admits, reserves and refuses exactly the same requests at the same instants, with the same
// waits (a property test keeps them equal). Pick the core limiter for one process, the
// shared one for a fleet. GCRA is the alternative (Config.Algorithm): a
// token bucket without a timer, with no double burst at cycle boundaries.
//
// ChangeLimitForPeriod stores the new limit in Redis, where it overrides every replica's
// LimitForPeriod from the next cycle on (Resilience4j's changeLimitForPeriod semantics: the
// permissions already reserved count against the new limit).
//
// Levee's pipelines take a shared limiter as a layer through Pipeline.With:
//
//	p := levee.Compose[Quote]().
//		WithCircuitBreaker(cb).
//		With(leveeredis.RateLimiterDecorator[Quote](rl))
//
// levee.Patterns and DefaultPipeline hold the core *ratelimiter.RateLimiter only.
//
// # When Redis is slow or down
//
// Every round trip is bounded by StoreTimeout (20ms by default, Envoy's global rate limit
// default) and goes through a levee circuit breaker (StoreCircuitBreaker), so that while Redis
// is down checks do not wait for it at all. One slow answer is not an outage: a check that
// fails while the store breaker is not OPEN is refused with a *StoreError
// (Metrics.StoreRefused), whatever the FailureMode but FailOpen, since Redis may still count
// it. An episode of unavailability starts when the store breaker opens and ends at Redis's
// next answer; during it checks follow FailureMode:
//
//   - FallbackToLocal (default): a local limiter admits this replica's share of the limit,
//     max(1, ⌊LimitForPeriod / live replicas⌋), the replicas counted by a heartbeat every
//     HeartbeatInterval in a sorted set (a replica silent for three intervals is dropped;
//     the count is known from the second heartbeat on and checks may raise it; a drop, which
//     enlarges the share, is believed only once every heartbeat of ten intervals saw it, and
//     never during an episode, since a Redis restarted empty or just reached again has heard
//     only from the replicas that beat since), or FallbackLimitForPeriod when set. Until the
//     count is known the share is 0: the replica refuses rather than believe it is alone. The
//     share runs the shared cycles (the Unix epoch on Redis's clock, estimated from the
//     answers) and engages from the cycle after the one the episode started in, which Redis
//     was counting. What it granted in the current cycle is sent with every check, and Redis
//     takes the part it was not told yet from the fleet's budget, once (in Redis's current
//     cycle, also when this replica's estimate of Redis's clock still sees the previous one);
//   - FailOpen: every call is admitted (and counted);
//   - FailClosed: every call is refused with a *StoreError, which matches
//     ratelimiter.ErrRequestNotPermitted and is a levee rejection.
//
// The guarantee: a cycle decided by Redis alone, or by the local shares alone, admits at most
// the limit (plus, during an outage, max(0, replicas - LimitForPeriod) when there are more
// replicas than permissions). A cycle at an episode's edge, in which some replicas ask Redis
// while others decide alone, may admit up to (replicas - 1) × share more, because Redis learns
// a replica's local admissions only when that replica reaches it within the same cycle; on a
// loaded machine the replica returning to Redis in such a cycle was also seen admitting its
// own local grants of the cycle on top of what Redis granted, so the bound to rely on for an
// edge cycle is the limit plus replicas × share.
//
// A check that timed out here may still be waiting in a stalled Redis: it carries its
// deadline, on Redis's clock (the offset is learned from the answers), and the script takes
// nothing once it has passed. Each check also carries an id: a check Redis granted but whose
// answer arrived too late is given back with the next answer in the same cycle
// (Metrics.Reclaimed), and a check id is never counted twice. A refusal says when to come
// back: ReservePermission returns the wait with the refusal, and Metrics.NanosToWait the wait
// for one permission (Redis's clock, or the local share's during an episode), for Retry-After
// or gRPC pushback. Metrics counts every decision; Config.Logger receives one record when an
// episode starts and one when it ends, never one per call.
//
// Use a client built for it: ContextTimeoutEnabled true (NewRateLimiter refuses a *redis.Client
// or *redis.ClusterClient without it, since go-redis would otherwise ignore StoreTimeout and a
// frozen Redis would hold each check for the client's ReadTimeout), MaxRetries -1, and dial,
// read and write timeouts of a few StoreTimeouts.
//
// # Costs and limits
//
// A check is one round trip (about 100µs over loopback) and allocates about 1KB in 24
// allocations in go-redis and context handling: the zero-allocation goal of levee's hot path
// does not apply to a shared limiter. One key is bounded by one Redis core (about 17µs of
// server time per check). Redis's replication is asynchronous: a failover may lose the last
// grants, and the new primary's clock may differ, so that a cycle may admit more once. A lost
// key (eviction, FLUSHALL, a restarted Redis without persistence) restarts the limiter full.
// Keys: <KeyPrefix>{<name>} (the state, expiring once the limiter is full again),
// <KeyPrefix>{<name>}:limit (set by ChangeLimitForPeriod, without expiry) and
// <KeyPrefix>{<name>}:replicas (the heartbeats); the hash tag keeps them in one Cluster slot.
package leveeredis
