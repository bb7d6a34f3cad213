package adaptive

import "time"

// Metrics is a snapshot of a limiter's state, taken at one instant.
type Metrics struct {
	// Limit is the number of calls admitted at once now.
	Limit int
	// InFlight is the number of calls holding a permit.
	InFlight int
	// Queued is the number of callers waiting for a permit.
	Queued int
	// NoLoadLatency is Vegas's baseline: the lowest latency measured since New or its last
	// probe, at most LatencyCeiling; for the other algorithms the lowest latency measured. 0
	// before the first measured call. AlgorithmMetrics has the other inputs.
	NoLoadLatency time.Duration
	// Permitted, Rejected and Dropped count, since New, the permits granted, the callers
	// refused (limit reached, wait ended or context ended) and the calls ended as dropped.
	Permitted, Rejected, Dropped uint64
}

// Metrics returns a snapshot of l, or the zero Metrics for a nil l.
func (l *Limiter) Metrics() Metrics {
	if l.unset() {
		return Metrics{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return Metrics{
		Limit:         l.limit,
		InFlight:      l.inFlight,
		Queued:        l.queue.Len(),
		NoLoadLatency: l.noLoadLocked(),
		Permitted:     l.permitted,
		Rejected:      l.rejected,
		Dropped:       l.dropped,
	}
}
