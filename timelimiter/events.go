package timelimiter

import (
	"context"
	"iter"
	"strconv"
	"time"

	"github.com/levee-go/levee/internal/event"
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
	if tl.unset() {
		return func() {}
	}
	return tl.events.Subscribe(fn)
}

// Events returns a channel that receives the time limiter's events (those Subscribe's callbacks receive), in publication order, and a function
// counting the events dropped so far. The channel holds up to buffer events (a buffer below 1
// is taken as 1, above 65536 as 65536); publishing never waits for the receiver: an event that finds the buffer full
// is discarded and counted by dropped. No goroutine serves the channel. It is closed, and the
// subscription removed, when ctx is done; events already buffered can still be received. With
// a ctx that is never done the subscription lasts as long as tl. A nil tl returns a closed
// channel and a count of 0.
func (tl *TimeLimiter) Events(ctx context.Context, buffer int) (events <-chan Event, dropped func() uint64) {
	if tl.unset() {
		return event.Closed[Event]()
	}
	return tl.events.Chan(ctx, buffer, nil)
}

// EventSeq returns the time limiter's events (those Subscribe's callbacks receive) as an iterator, and a function counting the events its iterations
// dropped so far. Each range statement over seq subscribes when it starts (events published
// before are not seen), yields the events through a buffer of buffer events as Events does
// (below 1 taken as 1, above 65536 as 65536; a full buffer drops and counts, publishing never waits for the loop
// body), and unsubscribes when the loop body breaks or ctx is done; the loop then ends after
// the events already buffered. A nil tl yields nothing.
func (tl *TimeLimiter) EventSeq(ctx context.Context, buffer int) (seq iter.Seq[Event], dropped func() uint64) {
	if tl.unset() {
		return event.Empty[Event]()
	}
	return tl.events.Seq(ctx, buffer, nil)
}

// OnSuccess records a call that returned in time, d after it started, as Resilience4j's
// TimeLimiter.onSuccess: it counts a success and publishes SUCCESS. Execute calls it; operators
// that enforce the deadline themselves call it too. On a nil tl it does nothing.
func (tl *TimeLimiter) OnSuccess(d time.Duration) {
	if tl.unset() {
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
	if tl.unset() {
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

// recordTimeout records a timeout of a call limited to timeout and returns its error; cause is
// the call's own error, if any.
func (tl *TimeLimiter) recordTimeout(timeout, d time.Duration, cause error) error {
	err := &TimeoutError{Name: tl.name, Timeout: timeout, Err: cause}
	tl.timedOut.Add(1)
	tl.publish(EventTimeout, d, err)
	return err
}

func (tl *TimeLimiter) publish(t EventType, d time.Duration, err error) {
	if tl.events.Active() {
		tl.events.Publish(Event{Name: tl.name, Type: t, Time: time.Now(), Duration: d, Err: err})
	}
}
