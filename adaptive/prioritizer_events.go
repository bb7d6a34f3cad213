package adaptive

import (
	"context"
	"iter"
	"log/slog"
	"strconv"
	"time"

	"github.com/levee-go/levee/internal/event"
	"github.com/levee-go/levee/internal/logging"
	"github.com/levee-go/levee/priority"
)

// PrioritizerEventType is the kind of a prioritizer event.
type PrioritizerEventType int

// The prioritizer event types. Admitted calls publish nothing here: their limiter publishes
// CALL_PERMITTED.
const (
	// PrioritizerCallShed: the prioritizer shed a call; PrioritizerEvent.Err is the
	// *ShedError the caller received (a levee rejection, matching ErrShed and
	// ErrLimitExceeded).
	PrioritizerCallShed PrioritizerEventType = iota + 1
	// PrioritizerCallRejected: the call was not shed but queued, and its limiter refused it
	// (its queue full or its wait over: a *LimitExceededError, a levee rejection) or its
	// context ended (the context's error); Err is that error.
	PrioritizerCallRejected
)

// String returns "CALL_SHED" or "CALL_REJECTED".
func (t PrioritizerEventType) String() string {
	switch t {
	case PrioritizerCallShed:
		return "CALL_SHED"
	case PrioritizerCallRejected:
		return "CALL_REJECTED"
	}
	return "PrioritizerEventType(" + strconv.Itoa(int(t)) + ")"
}

// PrioritizerEvent is what a prioritizer publishes to its subscribers: its name, the type,
// the time the event was created, the limiter the call was for, the call's level and the
// error the caller received.
type PrioritizerEvent struct {
	Name    string
	Type    PrioritizerEventType
	Time    time.Time
	Limiter string
	Level   priority.Level
	Err     error
}

// Subscribe registers fn to receive every event of p from now on and returns the function
// that unsubscribes it. fn runs synchronously on the caller's goroutine, outside every lock
// (it may call p), and must be quick. Events are built only while someone subscribes. A nil
// p subscribes nothing.
func (p *Prioritizer) Subscribe(fn func(PrioritizerEvent)) (unsubscribe func()) {
	if p.unset() || fn == nil {
		return func() {}
	}
	return p.events.Subscribe(fn)
}

// Events returns a channel that receives p's events, in publication order, and a function
// counting the events dropped so far, as Limiter.Events. A nil p returns a closed channel.
func (p *Prioritizer) Events(ctx context.Context, buffer int) (events <-chan PrioritizerEvent, dropped func() uint64) {
	if p.unset() {
		return event.Closed[PrioritizerEvent]()
	}
	return p.events.Chan(ctx, buffer, nil)
}

// EventSeq returns p's events as an iterator, as Limiter.EventSeq. A nil p yields nothing.
func (p *Prioritizer) EventSeq(ctx context.Context, buffer int) (seq iter.Seq[PrioritizerEvent], dropped func() uint64) {
	if p.unset() {
		return event.Empty[PrioritizerEvent]()
	}
	return p.events.Seq(ctx, buffer, nil)
}

func (p *Prioritizer) publish(typ PrioritizerEventType, l *Limiter, level priority.Level, err error) {
	if p.events.Active() {
		p.events.Publish(PrioritizerEvent{Name: p.name, Type: typ, Time: time.Now(), Limiter: l.name, Level: level, Err: err})
	}
}

// subscribeLogger subscribes the consumer of PrioritizerConfig.Logger: shed and rejected
// calls at Debug, as levee's patterns log their refusals, with the caller's error under err.
func (p *Prioritizer) subscribeLogger(logger *slog.Logger) {
	logging.Subscribe(&p.events, logger, "prioritizer", p.name, func(e PrioritizerEvent) (logging.Record, bool) {
		if e.Type == PrioritizerCallShed {
			return logging.Refusal("prioritizer call shed", e.Type.String(), e.Err), true
		}
		return logging.Refusal("prioritizer call rejected", e.Type.String(), e.Err), true
	})
}
