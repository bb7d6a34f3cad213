package bulkhead

import (
	"strconv"
	"time"
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
	if b == nil {
		return func() {}
	}
	return b.events.Subscribe(fn)
}

func (b *Bulkhead) publish(t EventType) {
	if b.events.Active() {
		b.events.Publish(Event{Name: b.name, Type: t, Time: time.Now()})
	}
}
