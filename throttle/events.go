package throttle

import (
	"context"
	"iter"
	"log/slog"
	"strconv"
	"time"

	"github.com/levee-go/levee/internal/event"
	"github.com/levee-go/levee/internal/logging"
)

// EventType is the kind of a throttler event.
type EventType int

// The event types, named as Resilience4j's bulkhead names its own.
const (
	// EventCallPermitted: Acquire let a call through.
	EventCallPermitted EventType = iota + 1
	// EventCallRejected: Acquire refused a call locally; Event.Err is the *ThrottledError
	// the caller received (a levee rejection, matching ErrThrottled).
	EventCallRejected
)

// String returns "CALL_PERMITTED" or "CALL_REJECTED".
func (t EventType) String() string {
	switch t {
	case EventCallPermitted:
		return "CALL_PERMITTED"
	case EventCallRejected:
		return "CALL_REJECTED"
	}
	return "EventType(" + strconv.Itoa(int(t)) + ")"
}

// Event is what a throttler publishes to its subscribers: its name, the type, the time the
// event was created, the rejection probability the decision was drawn against and, for
// CALL_REJECTED, the error the caller received (nil otherwise).
type Event struct {
	Name                 string
	Type                 EventType
	Time                 time.Time
	RejectionProbability float64
	Err                  error
}

// Subscribe registers fn to receive every event of t from now on and returns the function that
// unsubscribes it. fn runs synchronously on the goroutine that called Acquire, outside every
// lock of t (it may call t), and must be quick. Events are built only while someone
// subscribes, so an unobserved throttler pays one atomic load per call. A nil t subscribes
// nothing.
func (t *Throttler) Subscribe(fn func(Event)) (unsubscribe func()) {
	if t.unset() || fn == nil {
		return func() {}
	}
	return t.events.Subscribe(fn)
}

// Events returns a channel that receives t's events, in publication order, and a function
// counting the events dropped so far: a buffer of buffer events (below 1 taken as 1, above
// 65536 as 65536), an event finding it full is discarded and counted, no goroutine serves the
// channel, and it is closed when ctx is done. A nil t returns a closed channel.
func (t *Throttler) Events(ctx context.Context, buffer int) (events <-chan Event, dropped func() uint64) {
	if t.unset() {
		return event.Closed[Event]()
	}
	return t.events.Chan(ctx, buffer, nil)
}

// EventSeq returns t's events as an iterator, and a function counting the events its
// iterations dropped so far, as Events. A nil t yields nothing.
func (t *Throttler) EventSeq(ctx context.Context, buffer int) (seq iter.Seq[Event], dropped func() uint64) {
	if t.unset() {
		return event.Empty[Event]()
	}
	return t.events.Seq(ctx, buffer, nil)
}

func (t *Throttler) publish(typ EventType, p float64, err error) {
	if t.events.Active() {
		t.events.Publish(Event{Name: t.name, Type: typ, Time: time.Now(), RejectionProbability: p, Err: err})
	}
}

// logPattern is the value of the "pattern" attribute of a throttler's records.
const logPattern = "throttle"

// subscribeLogger subscribes the consumer of Config.Logger: local refusals at Debug, as
// levee's other patterns log theirs (one per call would flood a log at Info), with the
// error the caller received under "err"; permitted calls not at all.
func (t *Throttler) subscribeLogger(logger *slog.Logger) {
	logging.Subscribe(&t.events, logger, logPattern, t.name, func(e Event) (logging.Record, bool) {
		if e.Type != EventCallRejected {
			return logging.Record{}, false
		}
		return logging.Refusal("throttler call rejected", e.Type.String(), e.Err), true
	})
}
