package bulkhead

// Metrics is a snapshot of a bulkhead's state, as Resilience4j's Bulkhead.Metrics.
type Metrics struct {
	// AvailableConcurrentCalls is the number of free permits, max(0, max − in flight).
	AvailableConcurrentCalls int
	// MaxAllowedConcurrentCalls is the current MaxConcurrentCalls.
	MaxAllowedConcurrentCalls int
	// NumberOfWaitingCalls is the number of callers waiting for a permit.
	NumberOfWaitingCalls int
}

// Metrics returns a snapshot of b. The two permit figures come from one atomic load, so they
// are consistent with each other.
func (b *Bulkhead) Metrics() Metrics {
	if b.unset() {
		return Metrics{}
	}
	max, in := unpack(b.state.Load())
	var avail uint64
	if in < max {
		avail = max - in
	}
	return Metrics{
		AvailableConcurrentCalls:  int(avail),
		MaxAllowedConcurrentCalls: int(max),
		NumberOfWaitingCalls:      int(b.waiting.Load()),
	}
}
