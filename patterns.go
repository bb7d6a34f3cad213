package levee

import (
	"fmt"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

// Patterns names the patterns guarding one dependency. It is not generic, so one Patterns
// value serves calls of every result type; any field may be nil.
//
// levee's own patterns have fields of their concrete types, read back as they are
// (ps.CircuitBreaker.State()) and run without an allocation. Patterns of other kinds join
// through the fields typed by their role: Limiter takes any PermissionLimiter (a rate limiter
// shared by a fleet, leveeredis.RateLimiter), Admission any Admitter in a breaker's place (a
// breaker shared by a fleet, throttle.Throttler), ConcurrencyLimiter any Admitter in a
// bulkhead's place (adaptive.Limiter, adaptive.PartitionedLimiter). Both fields of a role may
// be set: DefaultPipeline nests the interface-typed one inside the concrete one.
type Patterns struct {
	Retry          *retry.Retry
	CircuitBreaker *circuitbreaker.CircuitBreaker
	RateLimiter    *ratelimiter.RateLimiter
	TimeLimiter    *timelimiter.TimeLimiter
	Bulkhead       *bulkhead.Bulkhead

	// Limiter takes one permission per attempt, inside RateLimiter.
	Limiter PermissionLimiter
	// Admission admits each attempt in a breaker's place, inside CircuitBreaker.
	Admission Admitter
	// ConcurrencyLimiter holds a permit while each attempt runs, inside Bulkhead.
	ConcurrencyLimiter Admitter
}

// Configs holds one config per pattern for NewPatterns. A nil field leaves that pattern out; a
// pointer to a zero Config builds the pattern with Resilience4j's defaults.
type Configs struct {
	Retry          *retry.Config
	CircuitBreaker *circuitbreaker.Config
	RateLimiter    *ratelimiter.Config
	TimeLimiter    *timelimiter.Config
	Bulkhead       *bulkhead.Config
}

// NewPatterns builds every pattern whose config c holds, all named name, with each package's
// New. The first config New refuses, in the order of Configs' fields, makes NewPatterns return
// a zero Patterns and an error that wraps New's, which names the package and the field:
//
//	levee: patterns "payment": circuitbreaker: FailureRateThreshold must be in (0, 100], got 150
//
// Nothing is returned half-built, and the patterns hold no goroutine or other resource, so
// there is nothing to release on error.
func NewPatterns(name string, c Configs) (Patterns, error) {
	var ps Patterns
	var err error
	if c.Retry != nil {
		if ps.Retry, err = retry.New(name, *c.Retry); err != nil {
			return Patterns{}, patternsError(name, err)
		}
	}
	if c.CircuitBreaker != nil {
		if ps.CircuitBreaker, err = circuitbreaker.New(name, *c.CircuitBreaker); err != nil {
			return Patterns{}, patternsError(name, err)
		}
	}
	if c.RateLimiter != nil {
		if ps.RateLimiter, err = ratelimiter.New(name, *c.RateLimiter); err != nil {
			return Patterns{}, patternsError(name, err)
		}
	}
	if c.TimeLimiter != nil {
		if ps.TimeLimiter, err = timelimiter.New(name, *c.TimeLimiter); err != nil {
			return Patterns{}, patternsError(name, err)
		}
	}
	if c.Bulkhead != nil {
		if ps.Bulkhead, err = bulkhead.New(name, *c.Bulkhead); err != nil {
			return Patterns{}, patternsError(name, err)
		}
	}
	return ps, nil
}

func patternsError(name string, err error) error {
	return fmt.Errorf("levee: patterns %q: %w", name, err)
}

// Must returns v, or panics with err when err is not nil, as regexp.MustCompile does. It is for
// configs written as literals and built once at start-up, where an error is a bug to find in
// the first test run:
//
//	var breaker = levee.Must(circuitbreaker.New("payment", circuitbreaker.Config{SlidingWindowSize: 20}))
//
// Never use it on a config read from a file, a flag or a request: check New's error there.
func Must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// DefaultPipeline nests ps in Resilience4j's annotation (aspect) order, with the fallback
// outermost:
//
//	Fallback(Retry(CircuitBreaker(RateLimiter(TimeLimiter(Bulkhead(call))))))
//
// The role-typed fields sit inside the concrete field of their role, so that the full nesting
// is
//
//	Fallback(Retry(CircuitBreaker(Admission(RateLimiter(Limiter(TimeLimiter(Bulkhead(ConcurrencyLimiter(call)))))))))
//
// Each retry attempt is one breaker decision and takes one rate-limiter permission, gets its own
// deadline, and holds the bulkhead only while it runs; the fallback answers only when the retry
// has given up. Unlike Resilience4j's annotations, the fallback cannot be placed inside the
// retry here: use Compose for another order. Nil fields and a nil fb are skipped.
//
// Because the bulkhead sits inside the time limiter, an attempt the time limiter has given up
// on keeps its bulkhead permit until the call really returns (its context is cancelled at the
// deadline, so a call that honours it returns at once). The bulkhead thus counts what really
// runs against the dependency; give it a MaxWaitDuration if the next attempt should wait for
// that permit rather than be refused.
func DefaultPipeline[T any](ps Patterns, fb *fallback.Fallback[T]) *Pipeline[T] {
	return Compose[T]().
		WithConcurrencyLimiter(ps.ConcurrencyLimiter).
		WithBulkhead(ps.Bulkhead).
		WithTimeLimiter(ps.TimeLimiter).
		WithPermissionLimiter(ps.Limiter).
		WithRateLimiter(ps.RateLimiter).
		WithAdmission(ps.Admission).
		WithCircuitBreaker(ps.CircuitBreaker).
		WithRetry(ps.Retry).
		WithFallback(fb)
}
