package leveeredis

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/ratelimiter"
)

// Defaults of Config that differ from the core ratelimiter's.
const (
	// DefaultLimitRefreshPeriod replaces Resilience4j's 500ns, far below the round trip a
	// shared check costs.
	DefaultLimitRefreshPeriod = time.Second
	// DefaultStoreTimeout bounds each round trip to Redis, as Envoy's global rate limit filter.
	DefaultStoreTimeout = 20 * time.Millisecond
	// DefaultHeartbeatInterval is how often a replica announces itself; a replica silent for
	// three intervals no longer counts.
	DefaultHeartbeatInterval = time.Second
	// DefaultKeyPrefix starts every key the limiter writes.
	DefaultKeyPrefix = "levee:rl:"
	// MaxLimitForPeriod is the largest LimitForPeriod: 2³¹-1, so that every count the
	// scripts keep (permissions times cycles reserved ahead) stays exact in Lua's doubles.
	MaxLimitForPeriod = 1<<31 - 1
)

// Algorithm selects how the shared limiter counts permissions.
type Algorithm int

const (
	// Cycles is Resilience4j's AtomicRateLimiter (the default): LimitForPeriod permissions per
	// cycle of LimitRefreshPeriod, unused ones lost at the end of the cycle, later cycles
	// reservable. Cycles are aligned on multiples of LimitRefreshPeriod since the Unix epoch on
	// Redis's clock (Resilience4j counts them from the limiter's creation; a fleet has no single
	// creation), so a core ratelimiter.RateLimiter created on such a multiple admits the same
	// calls.
	Cycles Algorithm = iota
	// GCRA is the generic cell rate algorithm (a token bucket without a timer): one permission
	// every LimitRefreshPeriod/LimitForPeriod, rounded up to a whole microsecond per request, and
	// a burst of at most LimitForPeriod. It has no double burst at cycle boundaries.
	GCRA
)

// String returns "CYCLES" or "GCRA".
func (a Algorithm) String() string {
	if a == GCRA {
		return "GCRA"
	}
	return "CYCLES"
}

// FailureMode decides what a check does when Redis does not answer in StoreTimeout, answers
// with an error, or its store circuit breaker is open.
type FailureMode int

const (
	// FallbackToLocal (the default) admits, during an episode of unavailability (the store
	// breaker OPEN), through a local limiter holding this replica's share of the limit:
	// FallbackLimitForPeriod, or max(1, ⌊LimitForPeriod / live replicas⌋) with the replicas
	// counted by heartbeats in Redis and returned by every check. A replica that never heard
	// from Redis does not know the count and refuses (set FallbackLimitForPeriod to admit
	// then). A check that fails outside an episode (one slow answer) is refused with a
	// *StoreError, never admitted locally: Redis may still count it. The share engages from
	// the second cycle after the last check or heartbeat that reached Redis (each promised
	// Redis that this replica stays out of its cycle and the next), and Redis holds back the
	// share of every replica without such a promise from the others, so that a cycle in which
	// some replicas ask Redis while others decide alone stays within the limit (see the
	// package documentation for the slack). Shares sum to at most the limit when replicas ≤
	// LimitForPeriod; 3 replicas under a limit of 2 get 1 each, so such a fleet admits up to
	// 3 per cycle while all of them decide alone.
	FallbackToLocal FailureMode = iota
	// FailOpen admits every call, as Envoy's default (failure_mode_deny false).
	FailOpen
	// FailClosed refuses every call with a *StoreError, which matches
	// ratelimiter.ErrRequestNotPermitted.
	FailClosed
)

// String returns "FALLBACK_TO_LOCAL", "FAIL_OPEN" or "FAIL_CLOSED".
func (m FailureMode) String() string {
	switch m {
	case FailOpen:
		return "FAIL_OPEN"
	case FailClosed:
		return "FAIL_CLOSED"
	}
	return "FALLBACK_TO_LOCAL"
}

// Config configures a shared RateLimiter. Its first three fields mean what they mean in
// ratelimiter.Config; the zero value of every field but LimitForPeriod (which must be set)
// means its default.
type Config struct {
	// LimitForPeriod is the number of permissions of each cycle for the whole fleet, in
	// [1, MaxLimitForPeriod]. It has no default: unlike the core limiter's 50, 0 is refused
	// by NewRateLimiter, since a fleet-wide limit is the partner's figure, and a forgotten
	// field must not admit 50 calls per cycle against it. ChangeLimitForPeriod overrides it
	// for every replica.
	LimitForPeriod int

	// LimitRefreshPeriod is the length of a cycle. Default 1s (not Resilience4j's 500ns); at
	// least 1ms and a whole number of microseconds.
	LimitRefreshPeriod time.Duration

	// TimeoutDuration is the longest a caller may be made to wait for a reserved permission.
	// Default 5s; ratelimiter.NoWait for none.
	TimeoutDuration time.Duration

	// Algorithm is Cycles (default) or GCRA.
	Algorithm Algorithm

	// StoreTimeout bounds each round trip to Redis. Default 20ms; between 1ms and 10s.
	StoreTimeout time.Duration

	// FailureMode is what a check does while Redis is unavailable. Default FallbackToLocal.
	FailureMode FailureMode

	// FallbackLimitForPeriod is the permissions per cycle of the local limiter of
	// FallbackToLocal. Default 0: max(1, ⌊limit / live replicas⌋), from heartbeats; negative or
	// above LimitForPeriod is refused.
	FallbackLimitForPeriod int

	// HeartbeatInterval is how often the replica records itself in Redis, when FailureMode is
	// FallbackToLocal and FallbackLimitForPeriod is 0 (otherwise no heartbeat runs). A replica
	// silent for three intervals no longer counts; a drop in the count is believed after ten
	// intervals of heartbeats that all saw it, outside an episode. Default 1s; between 10ms and
	// 1h.
	HeartbeatInterval time.Duration

	// StoreCircuitBreaker configures the breaker around Redis, named after the limiter. Nil,
	// the default: count-based window of 20 checks, at least 10, failure rate 50 %, a check
	// slower than StoreTimeout counted slow (slow-call rate 50 %), 1s open, 3 probes.
	StoreCircuitBreaker *circuitbreaker.Config

	// KeyPrefix starts every key. Default "levee:rl:". The keys are
	// <prefix>{<name>}, <prefix>{<name>}:limit and <prefix>{<name>}:replicas: the name is a
	// hash tag, so all three share a Redis Cluster slot.
	KeyPrefix string

	// ReplicaID names this replica in the heartbeat set and in its checks' ids. Default:
	// "<host name>:<pid>", with "/2", "/3" ... appended for the second and later limiters of
	// one process. 1 to 128 characters among letters, digits and . _ : / @ -.
	ReplicaID string

	// Logger receives one Warn record when Redis becomes unavailable and one Info record when
	// it answers again (an episode), never one per call. Nil, the default, logs nothing.
	Logger *slog.Logger
}

// withDefaults fills the zero fields and validates the result.
func (c Config) withDefaults() (Config, error) {
	if c.LimitRefreshPeriod == 0 {
		c.LimitRefreshPeriod = DefaultLimitRefreshPeriod
	}
	if c.TimeoutDuration == 0 {
		c.TimeoutDuration = ratelimiter.DefaultTimeoutDuration
	}
	if c.StoreTimeout == 0 {
		c.StoreTimeout = DefaultStoreTimeout
	}
	if c.HeartbeatInterval == 0 {
		c.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if c.KeyPrefix == "" {
		c.KeyPrefix = DefaultKeyPrefix
	}
	switch {
	case c.LimitForPeriod < 1 || c.LimitForPeriod > MaxLimitForPeriod:
		return c, fmt.Errorf("leveeredis: LimitForPeriod must be in [1, %d] (it has no default), got %d", MaxLimitForPeriod, c.LimitForPeriod)
	case c.LimitRefreshPeriod < time.Millisecond || c.LimitRefreshPeriod%time.Microsecond != 0:
		return c, fmt.Errorf("leveeredis: LimitRefreshPeriod must be >= 1ms and whole microseconds, got %v", c.LimitRefreshPeriod)
	case c.TimeoutDuration < 0 && c.TimeoutDuration != ratelimiter.NoWait:
		return c, fmt.Errorf("leveeredis: TimeoutDuration must be >= 0 or ratelimiter.NoWait, got %v", c.TimeoutDuration)
	case c.Algorithm != Cycles && c.Algorithm != GCRA:
		return c, fmt.Errorf("leveeredis: Algorithm must be Cycles or GCRA, got %d", int(c.Algorithm))
	case c.StoreTimeout < time.Millisecond || c.StoreTimeout > 10*time.Second:
		return c, fmt.Errorf("leveeredis: StoreTimeout must be in [1ms, 10s], got %v", c.StoreTimeout)
	case c.FailureMode < FallbackToLocal || c.FailureMode > FailClosed:
		return c, fmt.Errorf("leveeredis: FailureMode must be FallbackToLocal, FailOpen or FailClosed, got %d", int(c.FailureMode))
	case c.FallbackLimitForPeriod < 0:
		return c, fmt.Errorf("leveeredis: FallbackLimitForPeriod must be >= 0, got %d", c.FallbackLimitForPeriod)
	case c.FallbackLimitForPeriod > c.LimitForPeriod:
		return c, fmt.Errorf("leveeredis: FallbackLimitForPeriod must be <= LimitForPeriod (%d): a share larger than the fleet's limit cannot be met, got %d", c.LimitForPeriod, c.FallbackLimitForPeriod)
	case c.HeartbeatInterval < 10*time.Millisecond || c.HeartbeatInterval > time.Hour:
		return c, fmt.Errorf("leveeredis: HeartbeatInterval must be in [10ms, 1h], got %v", c.HeartbeatInterval)
	}
	if c.ReplicaID != "" {
		if err := checkReplicaID(c.ReplicaID); err != nil {
			return c, err
		}
	}
	return c, nil
}

// storeBreakerConfig returns the configuration of the breaker around Redis.
func (c Config) storeBreakerConfig() circuitbreaker.Config {
	if c.StoreCircuitBreaker != nil {
		return *c.StoreCircuitBreaker
	}
	return circuitbreaker.Config{
		FailureRateThreshold:                  50,
		SlowCallRateThreshold:                 50,
		SlowCallDurationThreshold:             c.StoreTimeout,
		SlidingWindowType:                     circuitbreaker.CountBased,
		SlidingWindowSize:                     20,
		MinimumNumberOfCalls:                  10,
		WaitDurationInOpenState:               time.Second,
		PermittedNumberOfCallsInHalfOpenState: 3,
	}
}
