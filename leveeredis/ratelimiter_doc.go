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
// epoch; with that alignment a core ratelimiter.RateLimiter with the same Config admits,
// reserves and refuses exactly the same requests. GCRA is the alternative (Config.Algorithm): a
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
// is down checks do not wait for it at all. A check Redis could not decide follows FailureMode:
//
//   - FallbackToLocal (default): a local ratelimiter.RateLimiter admits this replica's share of
//     the limit, ⌈LimitForPeriod / live replicas⌉, the replicas counted by a heartbeat every
//     HeartbeatInterval in a sorted set (a replica silent for three intervals is dropped); or
//     FallbackLimitForPeriod when set. The local limiter counts its cycles from its own start,
//     so the first cycle of an outage may overlap a shared one;
//   - FailOpen: every call is admitted (and counted);
//   - FailClosed: every call is refused with a *StoreError, which matches
//     ratelimiter.ErrRequestNotPermitted and is a levee rejection.
//
// A check that timed out here may still be waiting in a stalled Redis: it carries its
// deadline, on Redis's clock (the offset is learned from the answers), and the script takes
// nothing once it has passed, so a caller refused or sent to the fallback never consumes a
// shared permission. A permission can only be lost when an answer spends more than
// StoreTimeout/2 on its way back, or when the caller's context is cancelled during the round
// trip. Metrics counts every decision (Redis's, the local share's, fail-open, fail-closed,
// store failures and breaker rejections); Config.Logger receives one record when an episode of
// unavailability starts and one when it ends, never one per call.
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
