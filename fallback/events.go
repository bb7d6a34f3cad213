package fallback

import (
	"context"
	"iter"
	"time"

	"github.com/levee-go/levee/internal/event"
)

// EventType is the kind of an Event.
type EventType int

const (
	// EventAnswered: a handler answered a failed call, or replaced a result.
	EventAnswered EventType = iota + 1
	// EventFailed: a handler was chosen but returned an error or panicked.
	EventFailed
	// EventUnhandled: no handler matched the error, which went back to the caller unchanged.
	EventUnhandled
)

// String returns "ANSWERED", "FAILED" or "UNHANDLED".
func (t EventType) String() string {
	switch t {
	case EventAnswered:
		return "ANSWERED"
	case EventFailed:
		return "FAILED"
	case EventUnhandled:
		return "UNHANDLED"
	}
	return "UNKNOWN"
}

// Event reports one use of a Fallback: a fallback hides a failure from the caller, so it
// leaves a trace here.
type Event struct {
	Name     string        // the Fallback's name
	Type     EventType     // what happened
	Time     time.Time     // when it happened (time.Now)
	Duration time.Duration // how long the handler ran; 0 for EventUnhandled
	// Handler names the handler that ran, as New's errors do: `error "EOF"`,
	// `type *main.GatewayError`, "any error" or "result"; "" when none ran.
	Handler string
	Cause   error // the error being answered; nil when a result was being replaced
	Err     error // for EventFailed, the handler's error or panic (a *levee.PanicError)
}

// Subscribe registers fn to receive every Event and returns the function that removes it.
// Consumers run synchronously on the caller's goroutine, after the handler has run and outside
// every lock; a consumer's panic is recovered. Events are built only while someone subscribes.
func (f *Fallback[T]) Subscribe(fn func(Event)) (unsubscribe func()) {
	if f == nil {
		return func() {}
	}
	return f.events.Subscribe(fn)
}

// Events returns a channel that receives the fallback's events (those Subscribe's callbacks receive), in publication order, and a function
// counting the events dropped so far. The channel holds up to buffer events (a buffer below 1
// is taken as 1, above 65536 as 65536); publishing never waits for the receiver: an event that finds the buffer full
// is discarded and counted by dropped. No goroutine serves the channel. It is closed, and the
// subscription removed, when ctx is done; events already buffered can still be received. With
// a ctx that is never done the subscription lasts as long as f. A nil f returns a closed
// channel and a count of 0.
func (f *Fallback[T]) Events(ctx context.Context, buffer int) (events <-chan Event, dropped func() uint64) {
	if f == nil {
		return event.Closed[Event]()
	}
	return f.events.Chan(ctx, buffer, nil)
}

// EventSeq returns the fallback's events (those Subscribe's callbacks receive) as an iterator, and a function counting the events its iterations
// dropped so far. Each range statement over seq subscribes when it starts (events published
// before are not seen), yields the events through a buffer of buffer events as Events does
// (below 1 taken as 1, above 65536 as 65536; a full buffer drops and counts, publishing never waits for the loop
// body), and unsubscribes when the loop body breaks or ctx is done; the loop then ends after
// the events already buffered. A nil f yields nothing.
func (f *Fallback[T]) EventSeq(ctx context.Context, buffer int) (seq iter.Seq[Event], dropped func() uint64) {
	if f == nil {
		return event.Empty[Event]()
	}
	return f.events.Seq(ctx, buffer, nil)
}

// Metrics is a snapshot of a Fallback's counters since it was built. A caller's own
// cancellation is not counted, nor is a successful call (a live answer).
type Metrics struct {
	NumberOfFallbackAnswers int // handlers that answered (errors and replaced results)
	NumberOfFailedFallbacks int // handlers that returned an error or panicked
	NumberOfUnhandledErrors int // errors no handler matched, returned unchanged
}

// Metrics returns the current counts. Each is read atomically, the three not together: under
// concurrent calls the snapshot may mix instants.
func (f *Fallback[T]) Metrics() Metrics {
	if f == nil {
		return Metrics{}
	}
	return Metrics{
		NumberOfFallbackAnswers: int(f.answered.Load()),
		NumberOfFailedFallbacks: int(f.failed.Load()),
		NumberOfUnhandledErrors: int(f.unhandled.Load()),
	}
}
