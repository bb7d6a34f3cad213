package bulkhead

import (
	"context"
	"iter"
	"strconv"
	"time"

	"github.com/levee-go/levee/internal/event"
)

// EventType is the kind of a bulkhead event, as Resilience4j's BulkheadEvent.Type.
type EventType int

// The event types.
const (
	// EventCallPermitted: a caller got a permit (Acquire, TryAcquire, Execute).
	EventCallPermitted EventType = iota + 1
	// EventCallRejected: a caller got no permit, because the bulkhead stayed full or because
	// its context ended while it waited.
	EventCallRejected
	// EventCallFinished: a call gave its permit back with Release.
	EventCallFinished
)

// String returns the name of the type: "CALL_PERMITTED", "CALL_REJECTED" or
// "CALL_FINISHED".
func (t EventType) String() string {
	switch t {
	case EventCallPermitted:
		return "CALL_PERMITTED"
	case EventCallRejected:
		return "CALL_REJECTED"
	case EventCallFinished:
		return "CALL_FINISHED"
	}
	return "EventType(" + strconv.Itoa(int(t)) + ")"
}

// Event is what a bulkhead publishes to its subscribers: the bulkhead's name, the type and the
// time the event was created.
type Event struct {
	Name string
	Type EventType
	Time time.Time
}

// Subscribe registers fn to receive every event of b from now on and returns the function that
// unsubscribes it. fn runs synchronously on the goroutine that caused the event, outside every
// lock of b (it may call b), and must be quick. Events are built only while someone
// subscribes, so an unobserved bulkhead pays one atomic load per event.
func (b *Bulkhead) Subscribe(fn func(Event)) (unsubscribe func()) {
	if b.unset() {
		return func() {}
	}
	return b.events.Subscribe(fn)
}

// Events returns a channel that receives the bulkhead's events (those Subscribe's callbacks receive), in publication order, and a function
// counting the events dropped so far. The channel holds up to buffer events (a buffer below 1
// is taken as 1, above 65536 as 65536); publishing never waits for the receiver: an event that finds the buffer full
// is discarded and counted by dropped. No goroutine serves the channel. It is closed, and the
// subscription removed, when ctx is done; events already buffered can still be received. With
// a ctx that is never done the subscription lasts as long as b. A nil b returns a closed
// channel and a count of 0.
func (b *Bulkhead) Events(ctx context.Context, buffer int) (events <-chan Event, dropped func() uint64) {
	if b.unset() {
		return event.Closed[Event]()
	}
	return b.events.Chan(ctx, buffer, nil)
}

// EventSeq returns the bulkhead's events (those Subscribe's callbacks receive) as an iterator, and a function counting the events its iterations
// dropped so far. Each range statement over seq subscribes when it starts (events published
// before are not seen), yields the events through a buffer of buffer events as Events does
// (below 1 taken as 1, above 65536 as 65536; a full buffer drops and counts, publishing never waits for the loop
// body), and unsubscribes when the loop body breaks or ctx is done; the loop then ends after
// the events already buffered. A nil b yields nothing.
func (b *Bulkhead) EventSeq(ctx context.Context, buffer int) (seq iter.Seq[Event], dropped func() uint64) {
	if b.unset() {
		return event.Empty[Event]()
	}
	return b.events.Seq(ctx, buffer, nil)
}

func (b *Bulkhead) publish(t EventType) {
	if b.events.Active() {
		b.events.Publish(Event{Name: b.name, Type: t, Time: time.Now()})
	}
}
