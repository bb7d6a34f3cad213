package circuitbreaker

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"time"

	"github.com/levee-go/levee/internal/errmatch"
	"github.com/levee-go/levee/internal/safe"
)

// SlidingWindowType selects how the CLOSED and METRICS_ONLY windows aggregate outcomes, as
// Resilience4j's CircuitBreakerConfig.SlidingWindowType.
type SlidingWindowType int

const (
	// CountBased aggregates the last SlidingWindowSize recorded calls.
	CountBased SlidingWindowType = iota
	// TimeBased aggregates the calls recorded in the last SlidingWindowSize seconds, in
	// one-second buckets counted from the instant New ran, on the monotonic clock.
	TimeBased
)

// String returns "COUNT_BASED" or "TIME_BASED".
func (t SlidingWindowType) String() string {
	switch t {
	case CountBased:
		return "COUNT_BASED"
	case TimeBased:
		return "TIME_BASED"
	}
	return "SlidingWindowType(" + strconv.Itoa(int(t)) + ")"
}

// StateAfterWait is the state a breaker enters when MaxWaitDurationInHalfOpenState elapses:
// Resilience4j's transitionToStateAfterWaitDuration, whose default (OPEN) is the zero value.
type StateAfterWait int

const (
	// OpenAfterWait moves the breaker to OPEN, as an opening that counts as an attempt.
	OpenAfterWait StateAfterWait = iota
	// ClosedAfterWait moves the breaker to a fresh CLOSED period.
	ClosedAfterWait
)

// String returns "OPEN", "CLOSED", or "StateAfterWait(n)" for another value.
func (s StateAfterWait) String() string {
	switch s {
	case OpenAfterWait:
		return "OPEN"
	case ClosedAfterWait:
		return "CLOSED"
	}
	return "StateAfterWait(" + strconv.Itoa(int(s)) + ")"
}

// MaxSlidingWindowSize bounds SlidingWindowSize and PermittedNumberOfCallsInHalfOpenState so
// that a mistyped size cannot make New allocate without limit.
const MaxSlidingWindowSize = 1 << 20

// Config configures a CircuitBreaker. The zero value of every field means Resilience4j's
// default, shown in brackets; DefaultConfig returns them filled in. New validates every field.
type Config struct {
	// FailureRateThreshold is the failure rate, in percent, at or above which the breaker
	// opens. (0, 100] [50].
	FailureRateThreshold float32
	// SlowCallRateThreshold is the slow-call rate, in percent, at or above which the breaker
	// opens. (0, 100] [100].
	SlowCallRateThreshold float32
	// SlowCallDurationThreshold: a call that takes strictly longer is slow. > 0 [60s].
	//
	// Precision. Below 1 s every call is timed with two readings of the monotonic clock and
	// judged exactly, as Resilience4j judges it. From 1 s up (the default included) a call
	// reads the clock only when it ends, and starts from a reading the breaker took at most
	// about 1 ms earlier (see the package comment's "Timing"), which can only over-state its
	// duration: a call that took longer than the threshold is always slow, one that took at
	// most the threshold less 1 ms is never slow, and one in that last millisecond may be
	// judged slow (more than 1 ms only when the runtime runs a timer late). While the breaker
	// has a consumer of per-call events (SUCCESS, ERROR, IGNORED_ERROR) every call is timed
	// exactly, whatever the threshold.
	SlowCallDurationThreshold time.Duration

	// SlidingWindowType is CountBased [the zero value] or TimeBased.
	SlidingWindowType SlidingWindowType
	// SlidingWindowSize is the window in calls (CountBased) or seconds (TimeBased).
	// [1, MaxSlidingWindowSize] [100].
	SlidingWindowSize int
	// MinimumNumberOfCalls is how many calls the window must hold before rates are evaluated;
	// below it both rates are -1. A CountBased window uses min(MinimumNumberOfCalls,
	// SlidingWindowSize); a TimeBased window uses it as given. >= 1 [100].
	MinimumNumberOfCalls int

	// WaitDurationInOpenState is how long the breaker stays OPEN before it lets probes through.
	// >= 1ms [60s]. Leave it zero when WaitIntervalFunctionInOpenState is set.
	WaitDurationInOpenState time.Duration
	// WaitIntervalFunctionInOpenState, when set, gives the OPEN wait for each opening: attempt
	// is 1 for the first opening and grows with each reopening that does not pass through
	// CLOSED. A negative result counts as 0, a panic as the default wait. Setting it together
	// with WaitDurationInOpenState is an error. [nil: constant WaitDurationInOpenState]
	WaitIntervalFunctionInOpenState func(attempt int) time.Duration
	// PermittedNumberOfCallsInHalfOpenState is the number of probes HALF_OPEN admits, and the
	// size of its count-based window. [1, MaxSlidingWindowSize] [10].
	PermittedNumberOfCallsInHalfOpenState int
	// MaxWaitDurationInHalfOpenState, when non-zero, moves a breaker that has stayed
	// HALF_OPEN that long back to OPEN. 0 or >= 1ms [0: wait for the probes].
	MaxWaitDurationInHalfOpenState time.Duration
	// TransitionToStateAfterWaitDuration is the state entered when
	// MaxWaitDurationInHalfOpenState elapses before the probes decided: OpenAfterWait (an
	// opening that counts as an attempt) or ClosedAfterWait (a fresh CLOSED period), as
	// Resilience4j's transitionToStateAfterWaitDuration. [OpenAfterWait, the zero value]
	TransitionToStateAfterWaitDuration StateAfterWait
	// AutomaticTransitionFromOpenToHalfOpenEnabled moves OPEN to HALF_OPEN by a timer when
	// the wait ends; otherwise the move happens on the first permission request after it.
	// [false]
	AutomaticTransitionFromOpenToHalfOpenEnabled bool

	// RecordErrors lists the errors recorded as failures: sentinels (matched with errors.Is)
	// or levee.ErrorType[E]() markers (errors.As). When neither RecordErrors nor
	// RecordErrorPredicate is set every error is a failure; when either is set, an error that
	// matches neither counts as a success, as in Resilience4j. Nil entries are refused, and so
	// are sentinels that are levee rejections (bulkhead.ErrBulkheadFull, ...): this list never
	// sees one, so list them in RecordRejections (Resilience4j's
	// recordExceptions(BulkheadFullException.class) is RecordRejections here).
	RecordErrors []error
	// RecordErrorPredicate reports whether err is a failure, OR-ed with RecordErrors. Like
	// every list and predicate here but RecordRejections, it never sees a levee rejection.
	RecordErrorPredicate func(err error) bool
	// RecordRejections lists the levee rejections (levee.IsRejection: an inner bulkhead,
	// rate limiter or breaker refused the call) recorded as failures, e.g.
	// bulkhead.ErrBulkheadFull. Entries are matched like RecordErrors'; a sentinel entry must
	// itself be a levee rejection. A rejection it does not match is ignored (the permission
	// goes back, nothing is recorded), and no other list or predicate ever sees a rejection:
	// the dependency was never called. RecordRejections: levee.AllRejections() records every
	// rejection, as Resilience4j records them all. [nil: no rejection is recorded]
	RecordRejections []error
	// IgnoreErrors lists the errors that count as neither success nor failure: the permit is
	// handed back and nothing is recorded. Ignoring is checked first, so it wins over
	// recording. Nil entries are refused, and so are sentinels that are levee rejections: a
	// rejection is already ignored unless RecordRejections lists it.
	IgnoreErrors []error
	// IgnoreErrorPredicate reports whether err is ignored, OR-ed with IgnoreErrors. It never
	// sees a levee rejection.
	IgnoreErrorPredicate func(err error) bool
	// RecordResultPredicate reports whether a returned value (with a nil error) is a failure.
	// It is called only when set and only for non-nil results (as Resilience4j skips null; a
	// nil pointer inside a non-nil interface is passed on). Leaving it nil keeps Execute free
	// of allocations, since the value is boxed only to be handed to it. The caller still
	// receives the value. [nil]
	RecordResultPredicate func(result any) bool

	// TransitionOnResult, when set, can open the breaker on one call's outcome, as
	// Resilience4j's transitionOnResult: after each outcome recorded in the current period
	// (not a late outcome of an earlier period, see Permit, nor an ignored error, a cancelled
	// call or a refusal) of Execute, Permit.OnResult or Permit.OnError, it is called with the
	// call's result (Execute's value, OnResult's result, nil from OnError) and error. When it
	// returns OpenFor or OpenUntil and the outcome left the breaker CLOSED (the call's own
	// CLOSED period still current, or the CLOSED period a HALF_OPEN probe's trial has just
	// closed into, as Resilience4j), the breaker opens for that long, as
	// TransitionToOpenStateFor/Until (the attempt number does not grow), at most once per
	// CLOSED period; otherwise the answer is ignored. It is also called for results
	// RecordResultPredicate records as failures. Permit.OnSuccess,
	// having no result, does not call it. A function that panics asks for nothing. Setting it
	// makes Execute box each result into an any (an allocation for most T). [nil]
	TransitionOnResult func(result any, err error) Transition

	// InitialState is the state New starts in; OPEN, HALF_OPEN and FORCED_OPEN start with
	// attempt 1, as Resilience4j 2.4's initialState. [Closed]
	InitialState State

	// Logger, when set, receives the breaker's transitions and refusals as log/slog records
	// (see the package comment's Logging section): New subscribes one more event consumer
	// that logs them. It asks only for the types it may log (see SubscribeTypes), so a
	// successful call costs the same with a Logger as without: no event is built for it. A
	// refusal builds its NOT_PERMITTED event, logged at Debug when the logger enables it.
	// [nil: nothing is logged and nothing is subscribed]
	Logger *slog.Logger
}

// Defaults of Resilience4j's CircuitBreakerConfig.
const (
	defaultFailureRateThreshold      = 50
	defaultSlowCallRateThreshold     = 100
	defaultSlowCallDurationThreshold = 60 * time.Second
	defaultSlidingWindowSize         = 100
	defaultMinimumNumberOfCalls      = 100
	defaultWaitDurationInOpenState   = 60 * time.Second
	defaultPermittedInHalfOpen       = 10
)

// DefaultConfig returns Resilience4j's defaults filled in: FailureRateThreshold 50,
// SlowCallRateThreshold 100, SlowCallDurationThreshold 60s, CountBased window of 100 calls,
// MinimumNumberOfCalls 100, WaitDurationInOpenState 60s, 10 calls in HALF_OPEN, no maximum
// wait in HALF_OPEN, no automatic transition, every error recorded, nothing ignored.
//
// To use WaitIntervalFunctionInOpenState on top of it, set WaitDurationInOpenState to 0.
func DefaultConfig() Config {
	return Config{
		FailureRateThreshold:                  defaultFailureRateThreshold,
		SlowCallRateThreshold:                 defaultSlowCallRateThreshold,
		SlowCallDurationThreshold:             defaultSlowCallDurationThreshold,
		SlidingWindowType:                     CountBased,
		SlidingWindowSize:                     defaultSlidingWindowSize,
		MinimumNumberOfCalls:                  defaultMinimumNumberOfCalls,
		WaitDurationInOpenState:               defaultWaitDurationInOpenState,
		PermittedNumberOfCallsInHalfOpenState: defaultPermittedInHalfOpen,
	}
}

// normalize validates c and returns it with defaults filled in. Errors name the field and the
// allowed range, and are checked in field order.
func (c Config) normalize() (Config, error) {
	rate := func(field string, v *float32, def float32) error {
		switch {
		case *v == 0:
			*v = def
		case math.IsNaN(float64(*v)) || *v < 0 || *v > 100:
			return fmt.Errorf("circuitbreaker: %s must be in (0, 100], got %v", field, *v)
		}
		return nil
	}
	if err := rate("FailureRateThreshold", &c.FailureRateThreshold, defaultFailureRateThreshold); err != nil {
		return c, err
	}
	if err := rate("SlowCallRateThreshold", &c.SlowCallRateThreshold, defaultSlowCallRateThreshold); err != nil {
		return c, err
	}
	switch {
	case c.SlowCallDurationThreshold == 0:
		c.SlowCallDurationThreshold = defaultSlowCallDurationThreshold
	case c.SlowCallDurationThreshold < 0:
		return c, fmt.Errorf("circuitbreaker: SlowCallDurationThreshold must be > 0, got %v", c.SlowCallDurationThreshold)
	}
	if c.SlidingWindowType != CountBased && c.SlidingWindowType != TimeBased {
		return c, fmt.Errorf("circuitbreaker: SlidingWindowType must be CountBased or TimeBased, got %v", c.SlidingWindowType)
	}
	size := func(field string, v *int, def, max int) error {
		switch {
		case *v == 0:
			*v = def
		case *v < 1 || *v > max:
			if max == math.MaxInt {
				return fmt.Errorf("circuitbreaker: %s must be >= 1, got %d", field, *v)
			}
			return fmt.Errorf("circuitbreaker: %s must be in [1, %d], got %d", field, max, *v)
		}
		return nil
	}
	if err := size("SlidingWindowSize", &c.SlidingWindowSize, defaultSlidingWindowSize, MaxSlidingWindowSize); err != nil {
		return c, err
	}
	if err := size("MinimumNumberOfCalls", &c.MinimumNumberOfCalls, defaultMinimumNumberOfCalls, math.MaxInt); err != nil {
		return c, err
	}
	switch {
	case c.WaitDurationInOpenState != 0 && c.WaitIntervalFunctionInOpenState != nil:
		return c, errors.New("circuitbreaker: set WaitDurationInOpenState or WaitIntervalFunctionInOpenState, not both")
	case c.WaitDurationInOpenState == 0 && c.WaitIntervalFunctionInOpenState == nil:
		c.WaitDurationInOpenState = defaultWaitDurationInOpenState
	case c.WaitDurationInOpenState != 0 && c.WaitDurationInOpenState < time.Millisecond:
		return c, fmt.Errorf("circuitbreaker: WaitDurationInOpenState must be >= 1ms, got %v", c.WaitDurationInOpenState)
	}
	if err := size("PermittedNumberOfCallsInHalfOpenState", &c.PermittedNumberOfCallsInHalfOpenState, defaultPermittedInHalfOpen, MaxSlidingWindowSize); err != nil {
		return c, err
	}
	if d := c.MaxWaitDurationInHalfOpenState; d != 0 && d < time.Millisecond {
		// Resilience4j silently treats values below 1ms as "wait forever"; refusing them is
		// kinder than ignoring what the user asked for.
		return c, fmt.Errorf("circuitbreaker: MaxWaitDurationInHalfOpenState must be 0 or >= 1ms, got %v", d)
	}
	if t := c.TransitionToStateAfterWaitDuration; t != OpenAfterWait && t != ClosedAfterWait {
		return c, fmt.Errorf("circuitbreaker: TransitionToStateAfterWaitDuration must be OpenAfterWait or ClosedAfterWait, got %v", t)
	}
	if !c.InitialState.valid() {
		return c, fmt.Errorf("circuitbreaker: InitialState must be one of CLOSED, OPEN, HALF_OPEN, DISABLED, FORCED_OPEN, METRICS_ONLY, got %v", c.InitialState)
	}
	c.RecordErrors = append([]error(nil), c.RecordErrors...)
	c.IgnoreErrors = append([]error(nil), c.IgnoreErrors...)
	c.RecordRejections = append([]error(nil), c.RecordRejections...)
	return c, nil
}

// waitInOpenState is the OPEN wait for the given attempt.
func (c *Config) waitInOpenState(attempt int) time.Duration {
	if c.WaitIntervalFunctionInOpenState == nil {
		return c.WaitDurationInOpenState
	}
	// A function that panics falls back to the default wait rather than crashing a transition.
	return max(safe.Value(c.WaitIntervalFunctionInOpenState, attempt, defaultWaitDurationInOpenState), 0)
}

// compileList checks and compiles one error list of the config by the rule every pattern
// shares (errmatch.CompileField): every entry is a sentinel (matched with errors.Is) or a
// levee.ErrorType[E]() marker (errors.As); with rejections set a sentinel entry must be a levee
// rejection, and without it must not be one, since RecordErrors and IgnoreErrors never see a
// rejection: such an entry could never match.
func compileList(field string, entries []error, rejections bool) (errmatch.List, error) {
	f := errmatch.Field{Package: "circuitbreaker", Name: field, Rejections: rejections, Instead: "RecordRejections"}
	switch {
	case rejections:
		f.Instead = "RecordErrors"
	case field == "IgnoreErrors":
		f.Unless = "ignored"
	}
	return errmatch.CompileField(f, entries)
}
