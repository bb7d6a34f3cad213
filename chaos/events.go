package chaos

import (
	"strconv"
	"time"
)

// EventType tells which strategy injected, as Polly's telemetry events Chaos.OnFault,
// Chaos.OnLatency, Chaos.OnOutcome and Chaos.OnBehavior.
type EventType int

const (
	// EventFaultInjected is published by a Fault; Event.Err is the fault.
	EventFaultInjected EventType = iota + 1
	// EventLatencyInjected is published by a Latency; Event.Latency is the delay.
	EventLatencyInjected
	// EventOutcomeInjected is published by an Outcome; Event.Err is the outcome's error.
	EventOutcomeInjected
	// EventBehaviourInjected is published by a Behaviour before its function runs.
	EventBehaviourInjected
)

var eventNames = [...]string{"", "FAULT_INJECTED", "LATENCY_INJECTED", "OUTCOME_INJECTED", "BEHAVIOUR_INJECTED"}

// String returns the event type's name ("FAULT_INJECTED", ...), or "EventType(n)".
func (t EventType) String() string {
	if t >= EventFaultInjected && t <= EventBehaviourInjected {
		return eventNames[t]
	}
	return "EventType(" + strconv.Itoa(int(t)) + ")"
}

// Event is one injection by a strategy.
type Event struct {
	Name    string        // the strategy's name
	Type    EventType     // which strategy injected
	Time    time.Time     // when (time.Now, before the injection takes effect)
	Latency time.Duration // EventLatencyInjected: the delay
	Err     error         // EventFaultInjected: the fault; EventOutcomeInjected: the outcome's error
}
