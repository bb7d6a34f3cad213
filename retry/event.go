package retry

import (
	"context"
	"iter"
	"strconv"
	"time"

	"github.com/levee-go/levee/internal/event"
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
	// its interval function returned a negative interval, MaxDuration or the Budget refused
	// the next retry, or a config hook panicked.
	EventError
	// EventIgnoredError: the call failed with an error that is not retried (LastErr is
	// without the mark of Permanent).
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
	// not retried, or on EventError the last error — or a *MaxRetriesExceededError (which
	// wraps the last error, if any) when retrying stopped on a result with no earlier error,
	// with FailAfterMaxAttempts, or because MaxDuration or the Budget refused the next retry,
	// so that its Reason is seen.
	LastErr error

	// WaitInterval is the wait before the next attempt; set on EventRetry only.
	WaitInterval time.Duration
}

// Subscribe registers fn to receive every event of r and returns the function that removes it.
// fn runs synchronously on the goroutine of the call that caused the event, outside every lock,
// so it may use r; a panic in fn is recovered. Events are only built while someone subscribes,
// so an unobserved Retry pays one atomic load per would-be event.
func (r *Retry) Subscribe(fn func(Event)) (unsubscribe func()) {
	if r.unset() {
		return func() {}
	}
	return r.events.Subscribe(fn)
}

// Events returns a channel that receives the retry's events (those Subscribe's callbacks receive), in publication order, and a function
// counting the events dropped so far. The channel holds up to buffer events (a buffer below 1
// is taken as 1, above 65536 as 65536); publishing never waits for the receiver: an event that finds the buffer full
// is discarded and counted by dropped. No goroutine serves the channel. It is closed, and the
// subscription removed, when ctx is done; events already buffered can still be received. With
// a ctx that is never done the subscription lasts as long as r. A nil r returns a closed
// channel and a count of 0.
func (r *Retry) Events(ctx context.Context, buffer int) (events <-chan Event, dropped func() uint64) {
	if r.unset() {
		return event.Closed[Event]()
	}
	return r.events.Chan(ctx, buffer, nil)
}

// EventSeq returns the retry's events (those Subscribe's callbacks receive) as an iterator, and a function counting the events its iterations
// dropped so far. Each range statement over seq subscribes when it starts (events published
// before are not seen), yields the events through a buffer of buffer events as Events does
// (below 1 taken as 1, above 65536 as 65536; a full buffer drops and counts, publishing never waits for the loop
// body), and unsubscribes when the loop body breaks or ctx is done; the loop then ends after
// the events already buffered. A nil r yields nothing.
func (r *Retry) EventSeq(ctx context.Context, buffer int) (seq iter.Seq[Event], dropped func() uint64) {
	if r.unset() {
		return event.Empty[Event]()
	}
	return r.events.Seq(ctx, buffer, nil)
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
