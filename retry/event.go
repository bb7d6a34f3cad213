package retry

import (
	"strconv"
	"time"
)

// EventType is the kind of an Event, as Resilience4j's RetryEvent.Type.
type EventType int

const (
	// EventRetry: an attempt failed and the call will be retried after WaitInterval.
	EventRetry EventType = iota + 1
	// EventSuccess: the call succeeded after at least one retry. A success on the first attempt
	// publishes no event.
	EventSuccess
	// EventError: the call failed and will not be retried any more: its attempts are exhausted,
	// its interval function returned a negative interval, or a config hook panicked.
	EventError
	// EventIgnoredError: the call failed with an error that is not retried.
	EventIgnoredError
)

// String returns Resilience4j's name of the type: RETRY, SUCCESS, ERROR or IGNORED_ERROR.
func (t EventType) String() string {
	switch t {
	case EventRetry:
		return "RETRY"
	case EventSuccess:
		return "SUCCESS"
	case EventError:
		return "ERROR"
	case EventIgnoredError:
		return "IGNORED_ERROR"
	default:
		return "EventType(" + strconv.Itoa(int(t)) + ")"
	}
}

// Event is what a Retry publishes to its subscribers, as Resilience4j's RetryEvent.
type Event struct {
	Name string    // the Retry's name
	Type EventType // what happened
	Time time.Time // when it happened (time.Now)

	// NumberOfRetryAttempts is the number of failed attempts of the call so far: on EventRetry
	// the attempt just failed counts (1 before the first retry); on EventSuccess it is the
	// number of attempts that failed before the successful one; on EventIgnoredError it is the
	// number of earlier attempts that were retried.
	NumberOfRetryAttempts int

	// LastErr is the error of the outcome: the error being retried (nil on EventRetry caused by
	// a result), the last error before a success (nil if only results were retried), the error
	// not retried, or on EventError the last error — or a *MaxRetriesExceededError when
	// retrying stopped on a result with no earlier error, or with FailAfterMaxAttempts.
	LastErr error

	// WaitInterval is the wait before the next attempt; set on EventRetry only.
	WaitInterval time.Duration
}

// Subscribe registers fn to receive every event of r and returns the function that removes it.
// fn runs synchronously on the goroutine of the call that caused the event, outside every lock,
// so it may use r; a panic in fn is recovered. Events are only built while someone subscribes,
// so an unobserved Retry pays one atomic load per would-be event.
func (r *Retry) Subscribe(fn func(Event)) (unsubscribe func()) {
	if r == nil {
		return func() {}
	}
	return r.events.Subscribe(fn)
}

// publish builds and delivers an event when someone subscribes. It takes its fields as
// arguments rather than a *Context, so the caller's Context stays on its stack.
func (r *Retry) publish(t EventType, attempts int, lastErr error, wait time.Duration) {
	if !r.events.Active() {
		return
	}
	r.events.Publish(Event{
		Name:                  r.name,
		Type:                  t,
		Time:                  time.Now(),
		NumberOfRetryAttempts: attempts,
		LastErr:               lastErr,
		WaitInterval:          wait,
	})
}
