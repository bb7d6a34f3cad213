package retry

// Metrics is a snapshot of a Retry's counters, as Resilience4j's Retry.Metrics. Every call that
// ends counts once in exactly one of the four outcome counters; a call ended by its caller's
// cancellation counts in none, as a call that never finished.
type Metrics struct {
	// NumberOfSuccessfulCallsWithoutRetryAttempt counts calls that succeeded on the first attempt.
	NumberOfSuccessfulCallsWithoutRetryAttempt int64
	// NumberOfSuccessfulCallsWithRetryAttempt counts calls that succeeded after at least one retry.
	NumberOfSuccessfulCallsWithRetryAttempt int64
	// NumberOfFailedCallsWithoutRetryAttempt counts calls that ended with an error that is not
	// retried, even when earlier attempts of the call were retried.
	NumberOfFailedCallsWithoutRetryAttempt int64
	// NumberOfFailedCallsWithRetryAttempt counts calls that failed after their attempts ran out
	// (including MaxAttempts 1), or whose interval function, MaxDuration or Budget stopped them,
	// or that ended with their result still matching RetryOnResultPredicate.
	NumberOfFailedCallsWithRetryAttempt int64
	// NumberOfTotalCalls counts attempts: every invocation of a guarded call, once, except an
	// attempt ended by its caller's own cancellation, which no counter of the retry counts.
	NumberOfTotalCalls int64
}

// Metrics returns a snapshot of the counters. The counters are read one by one without a lock,
// so a snapshot taken while calls run may be mid-update across fields.
func (r *Retry) Metrics() Metrics {
	if r.unset() {
		return Metrics{}
	}
	return Metrics{
		NumberOfSuccessfulCallsWithoutRetryAttempt: r.successWithout.Load(),
		NumberOfSuccessfulCallsWithRetryAttempt:    r.successWith.Load(),
		NumberOfFailedCallsWithoutRetryAttempt:     r.failedWithout.Load(),
		NumberOfFailedCallsWithRetryAttempt:        r.failedWith.Load(),
		NumberOfTotalCalls:                         r.totalCalls.Load(),
	}
}
