package leveehttp

import (
	"errors"
	"slices"
	"time"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/retry"
)

// RetryConfig returns c adapted to a Transport's attempts, for retry.New:
//   - an attempt matching ErrNotRetryable (a client error, a request that cannot be sent
//     again, a Retry-After past the deadline) is not retried: ErrNotRetryable is added to
//     IgnoreErrors;
//   - the wait before a retry is c's own wait (WaitDuration, IntervalFunction or
//     IntervalBiFunction, with Resilience4j's default of 500ms when none is set), or longer when
//     the failed attempt's *StatusError carries a Retry-After: until its RetryAt. c's wait
//     setting becomes an IntervalBiFunction to do so; a negative wait of c's still stops
//     retrying.
//
// Every other field is kept; retry.New validates the result as usual. A WaitDuration New
// refuses (a negative other than retry.NoWait) is returned unchanged, for New to refuse.
func RetryConfig(c retry.Config) retry.Config {
	if c.WaitDuration < 0 && c.WaitDuration != retry.NoWait {
		// Invalid: kept as it is, so that retry.New refuses it naming WaitDuration, rather
		// than turned into an interval that silently stops retrying.
		return c
	}
	base := baseInterval(c)
	c.WaitDuration, c.IntervalFunction = 0, nil
	c.IntervalBiFunction = func(attempt int, err error, result any) time.Duration {
		d := base(attempt, err, result)
		if d < 0 {
			return d
		}
		var se *StatusError
		if errors.As(err, &se) && !se.RetryAt.IsZero() {
			d = max(d, time.Until(se.RetryAt))
		}
		return d
	}
	c.IgnoreErrors = append(slices.Clip(c.IgnoreErrors), ErrNotRetryable)
	return c
}

// baseInterval returns c's wait as an IntervalBiFunction. A config New would refuse (two wait
// settings) keeps its IntervalBiFunction; New then refuses the result for another reason or
// not at all, so validation is left to retry.New.
func baseInterval(c retry.Config) retry.IntervalBiFunction {
	switch {
	case c.IntervalBiFunction != nil:
		return c.IntervalBiFunction
	case c.IntervalFunction != nil:
		f := c.IntervalFunction
		return func(attempt int, _ error, _ any) time.Duration { return f(attempt) }
	}
	wait := c.WaitDuration
	switch {
	case wait == 0:
		wait = retry.DefaultWaitDuration
	case wait == retry.NoWait:
		wait = 0
	}
	return func(int, error, any) time.Duration { return wait }
}

// CircuitBreakerConfig returns c adapted to a Transport's attempts, for circuitbreaker.New: a
// client error (a *StatusError whose Failure is false, a 404 say) is ignored, neither success
// nor failure, as the request and not the server was at fault. c's IgnoreErrorPredicate, if
// any, is OR-ed with it; every other field is kept. Add TransitionOnResult: OpenOnRetryAfter to
// have a Retry-After open the breaker.
func CircuitBreakerConfig(c circuitbreaker.Config) circuitbreaker.Config {
	prev := c.IgnoreErrorPredicate
	c.IgnoreErrorPredicate = func(err error) bool {
		var se *StatusError
		if errors.As(err, &se) && !se.Failure {
			return true
		}
		return prev != nil && prev(err)
	}
	return c
}

// OpenOnRetryAfter is a circuitbreaker.Config.TransitionOnResult for a Transport's breaker: an
// attempt that failed with a Retry-After (a 429 or 503, as a *StatusError or inside a
// *RetryAfterError) opens the breaker until StatusError.RetryAt, the server's Retry-After
// capped at Config.MaxRetryAfter, as Resilience4j's transitionToOpenAndWaitUntil: no call is
// sent to a server that asked for quiet. A breaker stays OPEN until strictly after the instant
// it is given, so the one given is 1ns before RetryAt: a retry waiting until RetryAt finds the
// breaker letting probes through. Any other outcome asks for nothing.
func OpenOnRetryAfter(_ any, err error) circuitbreaker.Transition {
	var se *StatusError
	if err != nil && errors.As(err, &se) && !se.RetryAt.IsZero() {
		return circuitbreaker.OpenUntil(se.RetryAt.Add(-time.Nanosecond))
	}
	return circuitbreaker.Transition{}
}
