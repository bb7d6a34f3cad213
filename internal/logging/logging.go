// Package logging turns the events of levee's patterns into log/slog records, with one set of
// messages' shapes and attribute keys shared by every pattern.
//
// A pattern whose Config.Logger is set subscribes one consumer to its own event publisher
// (Subscribe); with no logger nothing is subscribed, so the pattern keeps publishing nothing
// and pays one atomic load per would-be event, as before. The consumer maps each event to a
// Record (or to nothing), asks the logger whether the record's level is enabled, and only then
// builds the attributes and calls Logger.LogAttrs.
package logging

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/levee-go/levee/internal/event"
)

// The attribute keys every pattern uses.
const (
	KeyPattern      = "pattern"        // the pattern: one of the Pattern constants
	KeyName         = "name"           // the instance's name
	KeyEvent        = "event"          // Resilience4j's event type name, e.g. STATE_TRANSITION
	KeyFrom         = "from"           // a transition's old state
	KeyTo           = "to"             // a transition's new state
	KeyErr          = "err"            // the event's error
	KeyAttempt      = "attempt"        // a retry's number of failed attempts so far
	KeyWait         = "wait"           // a retry's wait before the next attempt (time.Duration)
	KeyFailureRate  = "failure_rate"   // a window's failure rate, in percent
	KeySlowCallRate = "slow_call_rate" // a window's slow-call rate, in percent
)

// The values of KeyPattern.
const (
	CircuitBreaker = "circuitbreaker"
	Retry          = "retry"
	Bulkhead       = "bulkhead"
	RateLimiter    = "ratelimiter"
	TimeLimiter    = "timelimiter"
)

// Attrs selects the optional attributes of a Record.
type Attrs uint8

// The optional attributes, in the order they are logged after pattern, name and event.
const (
	WithTransition Attrs = 1 << iota // from, to
	WithRates                        // failure_rate, slow_call_rate
	WithAttempt                      // attempt
	WithWait                         // wait
	WithErr                          // err, when Err is not nil
)

// Record is what one event is logged as: a level, a stable message, the event type's name and
// the optional attributes that Attrs selects.
type Record struct {
	Level slog.Level
	Msg   string
	Event string
	Attrs Attrs

	From, To                  string
	FailureRate, SlowCallRate float32
	Attempt                   int
	Wait                      time.Duration
	Err                       error
}

// Subscribe subscribes to p a consumer that logs, through logger, the record describe returns
// for each event (nothing when it returns false), with pattern and name as the first
// attributes, and returns the function that removes it. A nil logger subscribes nothing and
// returns a function that does nothing.
//
// Records are logged with context.Background(): an event is not tied to one call's context
// (a timer moves a breaker, a release wakes another caller's wait).
func Subscribe[E any](p *event.Publisher[E], logger *slog.Logger, pattern, name string, describe func(E) (Record, bool)) (unsubscribe func()) {
	return SubscribeKinds(p, event.AllKinds, logger, pattern, name, describe)
}

// SubscribeKinds is Subscribe for the events of kinds only (see event.Publisher.SubscribeKinds):
// a pattern gives the kinds describe can log, so that events it never logs (one per call, say)
// are not built for the logger.
func SubscribeKinds[E any](p *event.Publisher[E], kinds uint64, logger *slog.Logger, pattern, name string, describe func(E) (Record, bool)) (unsubscribe func()) {
	if logger == nil {
		return func() {}
	}
	return p.SubscribeKinds(func(e E) {
		r, ok := describe(e)
		if !ok {
			return
		}
		ctx := context.Background()
		if !logger.Enabled(ctx, r.Level) {
			return
		}
		logger.LogAttrs(ctx, r.Level, r.Msg, r.attrs(pattern, name)...)
	}, kinds)
}

// attrs builds the record's attributes: pattern, name, event, then those Attrs selects.
func (r *Record) attrs(pattern, name string) []slog.Attr {
	a := make([]slog.Attr, 0, 8)
	a = append(a, slog.String(KeyPattern, pattern), slog.String(KeyName, name), slog.String(KeyEvent, r.Event))
	if r.Attrs&WithTransition != 0 {
		a = append(a, slog.String(KeyFrom, r.From), slog.String(KeyTo, r.To))
	}
	if r.Attrs&WithRates != 0 {
		a = append(a, slog.Float64(KeyFailureRate, rate(r.FailureRate)), slog.Float64(KeySlowCallRate, rate(r.SlowCallRate)))
	}
	if r.Attrs&WithAttempt != 0 {
		a = append(a, slog.Int(KeyAttempt, r.Attempt))
	}
	if r.Attrs&WithWait != 0 {
		a = append(a, slog.Duration(KeyWait, r.Wait))
	}
	if r.Attrs&WithErr != 0 && r.Err != nil {
		a = append(a, slog.Any(KeyErr, r.Err))
	}
	return a
}

// rate widens a float32 percentage to the float64 with the same shortest decimal form, so
// that 33.333332 is logged as 33.333332 and not as 33.33333206176758.
func rate(f float32) float64 {
	v, err := strconv.ParseFloat(strconv.FormatFloat(float64(f), 'g', -1, 32), 64)
	if err != nil { // not reached: FormatFloat's output always parses
		return float64(f)
	}
	return v
}

// TransitionLevel is the level of a transition into the state named to: Warn into OPEN and
// FORCED_OPEN, where calls are refused, Info into every other state.
func TransitionLevel(to string) slog.Level {
	if to == "OPEN" || to == "FORCED_OPEN" {
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// Refusal is the record of a refused call: at Debug (one per call would flood a log at Info),
// with msg, the event type's name and, under KeyErr, err, the error the caller received, so
// that a log shows which instance refused and why (the state of a breaker, for one).
func Refusal(msg, event string, err error) Record {
	return Record{Level: slog.LevelDebug, Msg: msg, Event: event, Attrs: WithErr, Err: err}
}

// BulkheadRejected is the record of a CALL_REJECTED event (named event) of a semaphore
// bulkhead or of a worker pool, which log their refusals alike: a Refusal carrying err, the
// bulkhead's full error.
func BulkheadRejected(event string, err error) Record {
	return Refusal("bulkhead call rejected", event, err)
}
