package ratelimiter

import (
	"context"
	"iter"
	"time"

	"github.com/levee-go/levee/internal/event"
)

// EventType is the kind of an Event, as Resilience4j's RateLimiterEvent.Type.
type EventType int

// The event types of a rate limiter.
const (
	// EventSuccessfulAcquire: permissions were obtained; by AcquirePermission once any wait is
	// over, by ReservePermission when they are taken or reserved.
	EventSuccessfulAcquire EventType = iota + 1
	// EventFailedAcquire: a request was refused, or its context ended while it waited.
	EventFailedAcquire
	// EventDrained: DrainPermissions ran, directly or on a result.
	EventDrained
)

// String returns the name of the type, e.g. "SUCCESSFUL_ACQUIRE".
func (t EventType) String() string {
	switch t {
	case EventSuccessfulAcquire:
		return "SUCCESSFUL_ACQUIRE"
	case EventFailedAcquire:
		return "FAILED_ACQUIRE"
	case EventDrained:
		return "DRAINED"
	}
	return "UNKNOWN"
}

// Event is what a rate limiter publishes to its subscribers.
type Event struct {
	// Name is the limiter's name.
	Name string
	// Type is what happened.
	Type EventType
	// Time is when it happened (time.Now()).
	Time time.Time
	// Permits is the number of permissions asked for; for EventDrained, the number of
	// permissions removed from the current cycle.
	Permits int
	// Wait is, for EventSuccessfulAcquire, how long the caller waited (AcquirePermission) or
	// must wait (ReservePermission) for reserved permissions; 0 when they were free.
	Wait time.Duration
	// Err is, for EventFailedAcquire, the *RequestNotPermittedError or the context's error.
	Err error
}

// Subscribe registers fn to receive every event published from now on and returns the function
// that unregisters it. fn runs synchronously on the goroutine that caused the event, outside
// every lock of the limiter (it may call the limiter); it should be quick. When nobody
// subscribes, no event is built.
func (rl *RateLimiter) Subscribe(fn func(Event)) (unsubscribe func()) {
	if rl.unset() {
		return func() {}
	}
	return rl.events.Subscribe(fn)
}

// Events returns a channel that receives the limiter's events (those Subscribe's callbacks receive), in publication order, and a function
// counting the events dropped so far. The channel holds up to buffer events (a buffer below 1
// is taken as 1, above 65536 as 65536); publishing never waits for the receiver: an event that finds the buffer full
// is discarded and counted by dropped. No goroutine serves the channel. It is closed, and the
// subscription removed, when ctx is done; events already buffered can still be received. With
// a ctx that is never done the subscription lasts as long as rl. A nil rl returns a closed
// channel and a count of 0.
func (rl *RateLimiter) Events(ctx context.Context, buffer int) (events <-chan Event, dropped func() uint64) {
	if rl.unset() {
		return event.Closed[Event]()
	}
	return rl.events.Chan(ctx, buffer, nil)
}

// EventSeq returns the limiter's events (those Subscribe's callbacks receive) as an iterator, and a function counting the events its iterations
// dropped so far. Each range statement over seq subscribes when it starts (events published
// before are not seen), yields the events through a buffer of buffer events as Events does
// (below 1 taken as 1, above 65536 as 65536; a full buffer drops and counts, publishing never waits for the loop
// body), and unsubscribes when the loop body breaks or ctx is done; the loop then ends after
// the events already buffered. A nil rl yields nothing.
func (rl *RateLimiter) EventSeq(ctx context.Context, buffer int) (seq iter.Seq[Event], dropped func() uint64) {
	if rl.unset() {
		return event.Empty[Event]()
	}
	return rl.events.Seq(ctx, buffer, nil)
}

func (rl *RateLimiter) publish(t EventType, permits int, wait time.Duration, err error) {
	rl.events.Publish(Event{Name: rl.name, Type: t, Time: time.Now(), Permits: permits, Wait: wait, Err: err})
}

// publishRefusal publishes FailedAcquire for a rejection; an invalid request is a programming
// error, not a refusal, and publishes nothing.
func (rl *RateLimiter) publishRefusal(permits int, err error) {
	if _, ok := err.(*RequestNotPermittedError); ok && rl.events.Active() {
		rl.publish(EventFailedAcquire, permits, 0, err)
	}
}
