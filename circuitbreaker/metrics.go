package circuitbreaker

import "time"

// Metrics is a snapshot of the current state's metrics, as Resilience4j's
// CircuitBreaker.Metrics. The window counts are taken from one consistent read.
//
// OPEN shows the metrics of the state it was entered from: the CLOSED or HALF_OPEN window
// that opened it, as it was then (outcomes of that period reported later are not recorded,
// see Permit), and the refusals since. Every other state starts empty. DISABLED and
// FORCED_OPEN never record.
type Metrics struct {
	State State // the state whose metrics these are
	// FailureRate and SlowCallRate are in percent, or -1 while the window holds fewer calls
	// than the minimum (min(MinimumNumberOfCalls, window size) for count-based windows,
	// including HALF_OPEN's; MinimumNumberOfCalls for a TIME_BASED window).
	FailureRate, SlowCallRate float32
	// NumberOfBufferedCalls is the number of calls in the window; successful + failed.
	NumberOfBufferedCalls int
	// NumberOfFailedCalls counts the failures in the window, slow or not.
	NumberOfFailedCalls int
	// NumberOfSuccessfulCalls counts the successes in the window, slow or not.
	NumberOfSuccessfulCalls int
	// NumberOfSlowCalls counts the calls that took longer than SlowCallDurationThreshold:
	// NumberOfSlowSuccessfulCalls + NumberOfSlowFailedCalls.
	NumberOfSlowCalls           int
	NumberOfSlowSuccessfulCalls int // slow calls that succeeded
	NumberOfSlowFailedCalls     int // slow calls that failed
	// TotalDuration is the sum of the durations of the calls in the window (each measured by
	// its Permit from Acquire to its outcome, or given to a WithDuration method), as
	// Resilience4j's Snapshot.getTotalDuration, in nanoseconds rather than truncated to
	// milliseconds. With a SlowCallDurationThreshold of 1 s or more and no per-call event consumer, a
	// call's start may be a reading up to about a millisecond older than the call (see the
	// package comment's "Timing"): each duration is then never shorter than the call and at
	// most that much longer (a few microseconds under steady load).
	TotalDuration time.Duration
	// AverageDuration is TotalDuration / NumberOfBufferedCalls, as Resilience4j's
	// Snapshot.getAverageDuration; 0 when the window is empty.
	AverageDuration time.Duration
	// SlowCallDuration is the sum of the durations of the slow calls in the window (a part of
	// TotalDuration); Resilience4j keeps no such total.
	SlowCallDuration time.Duration
	// NumberOfNotPermittedCalls counts the refusals since the breaker entered its current state
	// (not windowed): every transition starts new metrics, as Resilience4j's. For a running
	// total, count EventNotPermitted events.
	NumberOfNotPermittedCalls int
}

// Metrics returns a snapshot of the current state's metrics. Reading a TIME_BASED window
// moves it to the current second first, as Resilience4j. It never changes the state. A nil cb
// returns the zero Metrics.
func (cb *CircuitBreaker) Metrics() Metrics {
	if cb.unset() {
		return Metrics{}
	}
	st := cb.state.Load()
	c := st.metrics.win.snapshot()
	fr, sr := st.metrics.rates(c.tally())
	var avg time.Duration
	if c.calls > 0 {
		avg = c.duration / time.Duration(c.calls)
	}
	return Metrics{
		State:                       st.kind,
		FailureRate:                 fr,
		SlowCallRate:                sr,
		NumberOfBufferedCalls:       c.calls,
		NumberOfFailedCalls:         c.failed,
		NumberOfSuccessfulCalls:     c.calls - c.failed,
		NumberOfSlowCalls:           c.slow,
		NumberOfSlowSuccessfulCalls: c.slow - c.slowFailed,
		NumberOfSlowFailedCalls:     c.slowFailed,
		NumberOfNotPermittedCalls:   int(st.metrics.notPermitted.load()),
		TotalDuration:               c.duration,
		AverageDuration:             avg,
		SlowCallDuration:            c.slowDuration,
	}
}
