package adaptive

import (
	"context"
	"iter"
	"strconv"
	"time"

	"github.com/levee-go/levee/internal/event"
)

// EventType is the kind of a limiter event.
type EventType int

// The event types.
const (
	// EventCallPermitted: a caller got a permit (Acquire, Execute).
	EventCallPermitted EventType = iota + 1
	// EventCallRejected: a caller got no permit, because the limit was reached and the queue
	// was full or its wait ended, or because its context ended.
	EventCallRejected
	// EventLimitChanged: the algorithm moved the limit; Event.Limit is the new one.
	EventLimitChanged
)

// String returns "CALL_PERMITTED", "CALL_REJECTED" or "LIMIT_CHANGED".
func (t EventType) String() string {
	switch t {
	case EventCallPermitted:
		return "CALL_PERMITTED"
	case EventCallRejected:
		return "CALL_REJECTED"
	case EventLimitChanged:
		return "LIMIT_CHANGED"
	}
	return "EventType(" + strconv.Itoa(int(t)) + ")"
}

// Event is what a limiter publishes to its subscribers: the limiter's name, the type, the time
// the event was created and, for LIMIT_CHANGED, the new limit (else -1).
type Event struct {
	Name  string
	Type  EventType
	Time  time.Time
	Limit int
}

// Subscribe registers fn to receive every event of l from now on and returns the function that
// unsubscribes it. fn runs synchronously on the goroutine that caused the event, outside every
// lock of l (it may call l), and must be quick. Events are built only while someone
// subscribes, so an unobserved limiter pays one atomic load per event.
func (l *Limiter) Subscribe(fn func(Event)) (unsubscribe func()) {
	if l.unset() {
		return func() {}
	}
	return l.events.Subscribe(fn)
}

// Events returns a channel that receives the limiter's events, in publication order, and a
// function counting the events dropped so far, as bulkhead.Bulkhead.Events: a buffer of buffer
// events (below 1 taken as 1, above 65536 as 65536), an event finding it full is discarded and
// counted, no goroutine serves the channel, and it is closed when ctx is done. A nil l returns
// a closed channel and a count of 0.
func (l *Limiter) Events(ctx context.Context, buffer int) (events <-chan Event, dropped func() uint64) {
	if l.unset() {
		return event.Closed[Event]()
	}
	return l.events.Chan(ctx, buffer, nil)
}

// EventSeq returns the limiter's events as an iterator, and a function counting the events its
// iterations dropped so far, as bulkhead.Bulkhead.EventSeq. A nil l yields nothing.
func (l *Limiter) EventSeq(ctx context.Context, buffer int) (seq iter.Seq[Event], dropped func() uint64) {
	if l.unset() {
		return event.Empty[Event]()
	}
	return l.events.Seq(ctx, buffer, nil)
}
