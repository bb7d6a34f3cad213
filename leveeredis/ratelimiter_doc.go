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
// The shared patterns fill the core's roles, so they go where a local one does: a RateLimiter
// is a levee.PermissionLimiter and a levee.RetryAdvisor (RetryAfter, the wait until the
// fleet's next free permission), for a levee.Patterns' Limiter field, Pipeline's
// WithPermissionLimiter, the Limiter field of leveehttp.ServerConfig (429 with Retry-After) and
// leveegrpc.ServerConfig (pushback), and a paused stream (PauseWhileOpen waits for the fleet's
// next cycle); a SharedBreaker is a levee.Admitter and a levee.RetryAdvisor, for a Patterns'
// Admission field, Pipeline's WithAdmission and the servers' ConcurrencyLimiter field:
//
//	p := levee.DefaultPipeline[Quote](levee.Patterns{Admission: sb, Limiter: rl}, nil)
//
// RateLimiterDecorator and Decorator remain for Pipeline.With.
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
//     answers). What it granted in the current cycle is sent with every check, and Redis
//     takes the part it was not told yet from the fleet's budget, once (in Redis's current
//     cycle, also when this replica's estimate of Redis's clock still sees the previous one);
//   - FailOpen: every call is admitted (and counted);
//   - FailClosed: every call is refused with a *StoreError, which matches
//     ratelimiter.ErrRequestNotPermitted and is a levee rejection.
//
// The guarantee: every cycle admits at most the limit, whatever Redis's latency, whichever
// replicas ask Redis and whichever decide alone, with a slack of at most one permission per
// replica per episode edge, never more than 5 % of the limit (plus, while every replica decides
// alone, max(0, replicas - LimitForPeriod) when there are more replicas than permissions, each
// share being at least 1). It rests on promises: every check and heartbeat a replica sends
// outside an episode promises Redis that it grants nothing from its local share in the cycle
// Redis runs it in and the next (a check carries its deadline, so one run late promises
// nothing), and Redis records the promise with the replica's share. Every check then holds
// back, from what the asking replica may take, the share of each other replica whose promise
// does not cover the current cycle, and a share for each replica the asker counts that Redis
// has no record of (a Redis restarted empty); the local share of a replica in an episode
// engages only after the last cycle it promised. So the local shares a cycle may grant are
// always already subtracted from Redis's budget; once a replica is back, its local grants of the
// cycle are reported and replace the share held back for it. The slack is the clock: the local
// share decides by its estimate of Redis's clock, which lags Redis's by at most the way back of
// the last answer, and it grants nothing in that margin before each cycle's end.
//
// The costs: an episode's local share engages one cycle later than it could (in the second
// cycle after the last check or heartbeat that reached Redis), and a replica idle for more
// than a cycle with a HeartbeatInterval longer than LimitRefreshPeriod, or one that stopped
// (until its peers' count drops, ten heartbeat intervals), has its share held back from the
// others. Set HeartbeatInterval to at most LimitRefreshPeriod for idle replicas to keep their
// promises. A reservation of a later cycle (TimeoutDuration) holds back the shares of the
// replicas whose promise does not cover that cycle (beyond the next one, every other
// replica's), and gives up the part of the current cycle's leftover held back for others. With
// GCRA, which has no cycles, a check holds back the shares of the current cycle, also for its
// wait.
//
// Measured (the fault run of the package's tests: 3 replicas sharing 40 per second while Redis
// is slow, killed, frozen and paused, on a 2-core machine under load; see the README's fleet
// section): in six runs the busiest second admitted 40 in four, 41 and 42 in the others.
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
// <KeyPrefix>{<name>}:limit (set by ChangeLimitForPeriod, without expiry),
// <KeyPrefix>{<name>}:replicas (the heartbeats), <KeyPrefix>{<name>}:ids (the grants of the
// current cycle by check id) and <KeyPrefix>{<name>}:promises (each replica's promise and
// share); the hash tag keeps them in one Cluster slot.
package leveeredis
