package timelimiter

import (
	"strconv"
	"time"

	"github.com/levee-go/levee/internal/safe"
)

// EventType is the kind of a time limiter event, as Resilience4j's TimeLimiterEvent.Type.
type EventType int

// The event types.
const (
	// EventSuccess: the call returned in time without an error.
	EventSuccess EventType = iota + 1
	// EventError: the call returned in time with an error (Err).
	EventError
	// EventTimeout: the call did not return in time (Err is the *TimeoutError).
	EventTimeout
)

// String returns the type's name: "SUCCESS", "ERROR" or "TIMEOUT".
func (t EventType) String() string {
	switch t {
	case EventSuccess:
		return "SUCCESS"
	case EventError:
		return "ERROR"
	case EventTimeout:
		return "TIMEOUT"
	}
	return "EventType(" + strconv.Itoa(int(t)) + ")"
}

// Event is what a time limiter publishes to its subscribers.
type Event struct {
	Name     string        // the time limiter's name
	Type     EventType     // what happened
	Time     time.Time     // when the event was created
	Duration time.Duration // from the start of the execution to the outcome
	Err      error         // the call's error (ERROR) or the *TimeoutError (TIMEOUT); nil on SUCCESS
}

// Subscribe registers fn to receive every event of tl from now on and returns the function that
// unsubscribes it. fn runs synchronously on the caller's goroutine before Execute returns, and
// must be quick. Events are built only while someone subscribes.
func (tl *TimeLimiter) Subscribe(fn func(Event)) (unsubscribe func()) {
	if tl == nil {
		return func() {}
	}
	return tl.events.Subscribe(fn)
}

// OnSuccess records a call that returned in time, d after it started, as Resilience4j's
// TimeLimiter.onSuccess: it counts a success and publishes SUCCESS. Execute calls it; operators
// that enforce the deadline themselves call it too. On a nil tl it does nothing.
func (tl *TimeLimiter) OnSuccess(d time.Duration) {
	if tl == nil {
		return
	}
	tl.succeeded.Add(1)
	tl.publish(EventSuccess, d, nil)
}

// OnError records a call that ended with err, d after it started, as Resilience4j's
// TimeLimiter.onError: an err matching ErrTimeout counts a timeout and publishes TIMEOUT,
// any other counts a failure and publishes ERROR. A nil err is recorded as a success. On a nil
// tl it does nothing.
func (tl *TimeLimiter) OnError(d time.Duration, err error) {
	if tl == nil {
		return
	}
	switch {
	case err == nil:
		tl.OnSuccess(d)
	case safe.Is(err, ErrTimeout): // err is the caller's: its Is methods may panic
		tl.timedOut.Add(1)
		tl.publish(EventTimeout, d, err)
	default:
		tl.onError(d, err)
	}
}

func (tl *TimeLimiter) onError(d time.Duration, err error) {
	tl.failed.Add(1)
	tl.publish(EventError, d, err)
}

// recordTimeout records a timeout and returns its error; cause is the call's own error, if any.
func (tl *TimeLimiter) recordTimeout(d time.Duration, cause error) error {
	err := &TimeoutError{Name: tl.name, Timeout: tl.timeout, Err: cause}
	tl.timedOut.Add(1)
	tl.publish(EventTimeout, d, err)
	return err
}

func (tl *TimeLimiter) publish(t EventType, d time.Duration, err error) {
	if tl.events.Active() {
		tl.events.Publish(Event{Name: tl.name, Type: t, Time: time.Now(), Duration: d, Err: err})
	}
}
