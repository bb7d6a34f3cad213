package circuitbreaker

import (
	"context"
	"fmt"
	"iter"
	"strconv"
	"time"
)

// EventType is the kind of an Event, as Resilience4j's CircuitBreakerEvent.Type.
type EventType int

const (
	// EventSuccess: a call ended as a success (also an error that the record lists do not
	// match), recorded unless Late is set. Duration, Late.
	EventSuccess EventType = iota
	// EventError: a call ended as a failure, recorded unless Late is set. Duration, Err,
	// Late; Err is a *ResultRecordedAsFailureError when RecordResultPredicate matched a value.
	EventError
	// EventIgnoredError: an error was ignored and its permission released. Duration, Err,
	// Late.
	EventIgnoredError
	// EventNotPermitted: a permission was refused.
	EventNotPermitted
	// EventStateTransition: the state changed (not on a same-state transition). From, To.
	EventStateTransition
	// EventReset: Reset was called.
	EventReset
	// EventFailureRateExceeded: CLOSED just before opening on its failure rate, or
	// METRICS_ONLY the first time its failure rate reaches the threshold. FailureRate.
	EventFailureRateExceeded
	// EventSlowCallRateExceeded: as EventFailureRateExceeded for the slow-call rate.
	// SlowCallRate.
	EventSlowCallRateExceeded
	// EventInitialState: the first event of every stream (Events, EventSeq), giving the
	// state when the stream subscribed; From and To are both that state. It is never
	// published to Subscribe's callbacks and has no Resilience4j counterpart: it lets a
	// consumer show the state before the first transition without reading State apart.
	EventInitialState
)

var eventTypeNames = [...]string{"SUCCESS", "ERROR", "IGNORED_ERROR", "NOT_PERMITTED",
	"STATE_TRANSITION", "RESET", "FAILURE_RATE_EXCEEDED", "SLOW_CALL_RATE_EXCEEDED", "INITIAL_STATE"}

// String returns Resilience4j's name of t, e.g. "STATE_TRANSITION".
func (t EventType) String() string {
	if t >= 0 && int(t) < len(eventTypeNames) {
		return eventTypeNames[t]
	}
	return "EventType(" + strconv.Itoa(int(t)) + ")"
}

// Event is one event of a breaker. Fields other than Name, Type and Time are set only for the
// types that carry them (see EventType).
type Event struct {
	Name     string        // the breaker's name
	Type     EventType     // what happened
	Time     time.Time     // when it was published (time.Now)
	Duration time.Duration // elapsed time of the call (SUCCESS, ERROR, IGNORED_ERROR)
	Err      error         // the error (ERROR, IGNORED_ERROR)
	From, To State         // STATE_TRANSITION; INITIAL_STATE (From == To)
	// FailureRate and SlowCallRate are the window's rates, in percent, that the
	// *_RATE_EXCEEDED events were decided on (both are set on both events).
	FailureRate, SlowCallRate float32
	// Late is set on SUCCESS, ERROR and IGNORED_ERROR when the call's permit was granted by an
	// earlier period than the current one (the breaker changed state, or Reset, while the
	// call ran): the event tells that the call ended, but its outcome was recorded in no
	// window and moved nothing (see Permit).
	Late bool
}

// String describes e in the words of Resilience4j's event messages, without the time:
// "CircuitBreaker 'payment' changed state from CLOSED to OPEN". A Late event's message ends
// with " (late: permitted by an earlier period, not recorded)".
func (e Event) String() string {
	s := e.message()
	if e.Late {
		s += " (late: permitted by an earlier period, not recorded)"
	}
	return s
}

func (e Event) message() string {
	switch e.Type {
	case EventSuccess:
		return fmt.Sprintf("CircuitBreaker '%s' recorded a successful call. Elapsed time: %v", e.Name, e.Duration)
	case EventError:
		return fmt.Sprintf("CircuitBreaker '%s' recorded an error: '%v'. Elapsed time: %v", e.Name, e.Err, e.Duration)
	case EventIgnoredError:
		return fmt.Sprintf("CircuitBreaker '%s' recorded an error which has been ignored: '%v'. Elapsed time: %v", e.Name, e.Err, e.Duration)
	case EventNotPermitted:
		return fmt.Sprintf("CircuitBreaker '%s' recorded a call which was not permitted.", e.Name)
	case EventStateTransition:
		return fmt.Sprintf("CircuitBreaker '%s' changed state from %v to %v", e.Name, e.From, e.To)
	case EventReset:
		return fmt.Sprintf("CircuitBreaker '%s' reset", e.Name)
	case EventInitialState:
		return fmt.Sprintf("CircuitBreaker '%s' is in state %v", e.Name, e.To)
	case EventFailureRateExceeded:
		return fmt.Sprintf("CircuitBreaker '%s' exceeded failure rate threshold. Current failure rate: %v", e.Name, e.FailureRate)
	case EventSlowCallRateExceeded:
		return fmt.Sprintf("CircuitBreaker '%s' exceeded slow call rate threshold. Current slow call rate: %v", e.Name, e.SlowCallRate)
	}
	return fmt.Sprintf("CircuitBreaker '%s' %v", e.Name, e.Type)
}

// Subscribe registers fn to receive every event of the breaker and returns the function that
// removes it. fn runs synchronously on the goroutine that caused the event, after the
// breaker's state has been updated and outside every lock, so it may call the breaker (State,
// Metrics, even transitions); a panic in fn is recovered. With no subscriber, events are not
// even built. Subscribe asks for every event, SUCCESS, ERROR and IGNORED_ERROR included, so
// that each call then builds its event and is timed with two clock readings; SubscribeTypes
// asks for some types only, and costs a call nothing when those are not per-call events.
//
// Only STATE_TRANSITION and RESET are published while the breaker is DISABLED or
// FORCED_OPEN, as in Resilience4j. A failing call that opens the breaker publishes ERROR,
// then FAILURE_RATE_EXCEEDED and/or SLOW_CALL_RATE_EXCEEDED, then STATE_TRANSITION.
func (cb *CircuitBreaker) Subscribe(fn func(Event)) (unsubscribe func()) {
	if cb.unset() {
		return func() {}
	}
	return cb.events.Subscribe(fn)
}

// SubscribeTypes registers fn to receive the breaker's events of the given types only, as
// Resilience4j's per-type consumers (onStateTransition, onError, ...), and returns the function
// that removes it; calling that more than once is harmless. fn runs as Subscribe's callbacks do.
// No types, or a nil fn, registers nothing.
//
// What a subscription costs depends on its types. SUCCESS, ERROR and IGNORED_ERROR are one
// event per call: while any subscriber asks for one of them, every call builds and delivers its
// event, and is timed with two clock readings so that the duration it carries is exact (see the
// package comment's "Timing"). A subscriber that asks only for the other types (transitions,
// RESET, the *_RATE_EXCEEDED events, NOT_PERMITTED) costs a successful call nothing: no event
// is built for it, and the call keeps its one clock reading. Per-call counts, duration sums and
// histograms are in CallStats, read when needed, without any subscription. Config.Logger and
// OnStateChange subscribe that way.
func (cb *CircuitBreaker) SubscribeTypes(fn func(Event), types ...EventType) (unsubscribe func()) {
	if cb.unset() {
		return func() {}
	}
	var kinds uint64
	for _, t := range types {
		if t >= 0 && t < 64 {
			kinds |= 1 << uint(t)
		}
	}
	return cb.events.SubscribeKinds(fn, kinds)
}

// callEvents are the kinds of the per-call events, which a breaker builds only for
// subscribers that ask for them.
const callEvents = 1<<EventSuccess | 1<<EventError | 1<<EventIgnoredError

// loggedEvents are the kinds of the events Config.Logger may log (see logRecord).
const loggedEvents = 1<<EventStateTransition | 1<<EventReset | 1<<EventFailureRateExceeded |
	1<<EventSlowCallRateExceeded | 1<<EventNotPermitted

// Events returns a channel that receives the breaker's events (the ones Subscribe's callbacks
// receive, in the same order) and a function counting the events dropped so far. The first
// event in the channel is an EventInitialState with the state at subscription (a transition
// under way while subscribing may follow it). The channel holds up to buffer events (a buffer
// below 1 is taken as 1, above 65536 as 65536); publishing never waits for the receiver: an event that finds the
// buffer full is discarded and counted by dropped. No goroutine serves the channel. It is
// closed, and the subscription removed, when ctx is done; events already buffered can still
// be received. With a ctx that is never done the subscription lasts as long as the breaker.
// A nil cb returns a closed channel and a count of 0.
func (cb *CircuitBreaker) Events(ctx context.Context, buffer int) (events <-chan Event, dropped func() uint64) {
	if cb.unset() {
		ch := make(chan Event)
		close(ch)
		return ch, func() uint64 { return 0 }
	}
	s := cb.events.Stream(ctx, buffer, cb.initialEvent)
	return s.C(), s.Dropped
}

// EventSeq returns the breaker's events as an iterator, and a function counting the events
// its iterations dropped so far. Each range statement over seq subscribes when it starts
// (events published before are not seen), yields an EventInitialState first, then the events
// as Events delivers them through a buffer of buffer events (below 1 taken as 1, above 65536 as 65536; a full buffer
// drops and counts, publishing never waits for the loop body), and unsubscribes when the loop
// body breaks or ctx is done; then the loop ends after the events already buffered.
// A nil cb yields nothing.
func (cb *CircuitBreaker) EventSeq(ctx context.Context, buffer int) (seq iter.Seq[Event], dropped func() uint64) {
	if cb.unset() {
		return func(func(Event) bool) {}, func() uint64 { return 0 }
	}
	return cb.events.Seq(ctx, buffer, cb.initialEvent)
}

func (cb *CircuitBreaker) initialEvent() (Event, bool) {
	st := cb.State()
	return Event{Name: cb.name, Type: EventInitialState, Time: time.Now(), From: st, To: st}, true
}

// OnStateChange registers fn to be called with the states of every transition of the breaker
// (from != to), as gobreaker's Settings.OnStateChange, and returns the function that removes
// it; calling that more than once is harmless. It is Subscribe filtered on
// EventStateTransition, so the common case needs no type switch. Transitions are delivered in
// the order they happened: fn runs on the goroutine that made the transition (or, when several
// goroutines transition at once, on the one delivering an earlier transition), after the state
// has changed and outside every lock, so it may call the breaker (State, Metrics, even a
// transition, whose event comes once fn has returned); a panic in fn is recovered.
// A nil fn or a nil cb registers nothing.
func (cb *CircuitBreaker) OnStateChange(fn func(from, to State)) (unsubscribe func()) {
	if cb.unset() || fn == nil {
		return func() {}
	}
	return cb.events.SubscribeKinds(func(e Event) {
		if e.Type == EventStateTransition {
			fn(e.From, e.To)
		}
	}, 1<<EventStateTransition)
}

// publish stamps and delivers e. Callers check events.Active first so that nothing is built
// when no one listens.
func (cb *CircuitBreaker) publish(e Event) {
	forced := e.Type == EventStateTransition || e.Type == EventReset
	if !forced && !cb.state.Load().kind.allowPublish() {
		return
	}
	e.Name = cb.name
	e.Time = time.Now()
	cb.events.PublishKind(e, 1<<uint(e.Type))
}

func (cb *CircuitBreaker) publishTransition(from, to State) {
	if from != to && cb.events.Wants(1<<EventStateTransition) {
		cb.publish(Event{Type: EventStateTransition, From: from, To: to})
	}
}

func (cb *CircuitBreaker) publishExceeded(v verdict, fr, sr float32) {
	if !cb.events.Wants(1<<EventFailureRateExceeded | 1<<EventSlowCallRateExceeded) {
		return
	}
	if v&failureRateExceeded != 0 {
		cb.publish(Event{Type: EventFailureRateExceeded, FailureRate: fr, SlowCallRate: sr})
	}
	if v&slowCallRateExceeded != 0 {
		cb.publish(Event{Type: EventSlowCallRateExceeded, FailureRate: fr, SlowCallRate: sr})
	}
}
