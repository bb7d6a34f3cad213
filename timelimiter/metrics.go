package timelimiter

// Metrics is a snapshot of a time limiter's counters. The three outcome counters are
// cumulative since New, as Resilience4j's Micrometer counter resilience4j.timelimiter.calls with
// kind successful, failed and timeout.
type Metrics struct {
	// NumberOfAbandonedCalls is the number of calls still running whose caller stopped
	// waiting (at the timeout, or because its own context ended). It goes back down as each
	// returns.
	NumberOfAbandonedCalls int
	// NumberOfSuccessfulCalls counts the calls that returned in time without an error.
	NumberOfSuccessfulCalls int64
	// NumberOfFailedCalls counts the calls that returned in time with an error, panics
	// included, the caller's own cancellation excluded.
	NumberOfFailedCalls int64
	// NumberOfTimedOutCalls counts the timeouts.
	NumberOfTimedOutCalls int64
}

// Metrics returns a snapshot of tl's counters, each read atomically; zero for a nil tl.
func (tl *TimeLimiter) Metrics() Metrics {
	if tl.unset() {
		return Metrics{}
	}
	return Metrics{
		NumberOfAbandonedCalls:  int(tl.abandoned.Load()),
		NumberOfSuccessfulCalls: tl.succeeded.Load(),
		NumberOfFailedCalls:     tl.failed.Load(),
		NumberOfTimedOutCalls:   tl.timedOut.Load(),
	}
}
