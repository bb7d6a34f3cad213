package circuitbreaker

import (
	"sync/atomic"
	"time"
)

// The call clock.
//
// A call's duration decides whether it was slow, so a breaker reads the monotonic clock when
// the call ends. Reading it when the call starts too would double the cost of a successful
// call, for a threshold (60 s by default) that a coarser start can judge: a call that starts
// within coarseGrain of a reading some other operation of the breaker already took may use
// that reading as its start. The reading is never later than the call's true start, so a
// duration measured from it is never shorter than the call and is at most coarseGrain longer
// (more only by the delay with which the runtime runs the timer that retires the reading):
//
//   - a call that took longer than SlowCallDurationThreshold is always slow, exactly as
//     Resilience4j judges it;
//   - a call that took at most the threshold less coarseGrain is never slow;
//   - one in between (the last millisecond below the threshold) may be judged slow.
//
// Periods whose threshold is below coarseMinThreshold read the clock at both ends, and so do
// all calls while the breaker has a consumer of per-call events (Subscribe, Events, EventSeq,
// SubscribeTypes with SUCCESS, ERROR or IGNORED_ERROR), so that the durations events carry are
// exact. Consumers of the other events (a Logger, OnStateChange) and leveeprom, which reads
// CallStats, keep the one reading.
// In a testing/synctest bubble the fake clock only moves while every goroutine is blocked;
// a breaker created in one always reads both ends (and arms no timer of the bubble), so that
// tests see exact durations.
//
// The shared reading is one word: the reading (time since the epoch), or -1 once it may be
// older than coarseGrain. The first call that finds -1 reads the clock, stores its reading
// and arms a timer that stores -1 again coarseGrain later; calls that end more than
// coarseRefresh after the stored reading replace it with their end, so that under load the
// starts stay within a few microseconds of the truth and Metrics' durations with them. No
// goroutine runs in the background: an idle breaker's timer fires once and is not re-armed
// until a call needs a fresh reading.
const (
	// coarseGrain is how long a shared reading may serve as the start of calls.
	coarseGrain = time.Millisecond
	// coarseRefresh is how stale the shared reading may grow before a call's end replaces
	// it: rare enough that the cores do not trade the word's cache line on every call.
	coarseRefresh = 10 * time.Microsecond
	// coarseMinThreshold is the smallest SlowCallDurationThreshold judged from a shared
	// start: coarseGrain is at most 0.1 % of it.
	coarseMinThreshold = time.Second
)

// callClock is a breaker's shared start reading; see the comment above.
type callClock struct {
	_       [cacheLine]byte // read by every call, written about once per coarseRefresh
	reading atomic.Int64
	_       [cacheLine - 8]byte
	timer   *time.Timer // stores -1 coarseGrain after a new reading; nil in a synctest bubble
}

// cacheLine is the cache line size of common 64-bit processors.
const cacheLine = 64

// init prepares the clock for a breaker created at epoch: off (timer nil) when epoch has no
// monotonic reading, which is what time.Now returns in a synctest bubble.
func (c *callClock) init(epoch time.Time) {
	c.reading.Store(-1)
	if epoch == epoch.Round(0) { // Round(0) only strips a monotonic reading
		return
	}
	c.timer = time.AfterFunc(time.Hour, func() { c.reading.Store(-1) })
	c.timer.Stop()
}

// coarse reports whether periods with threshold judge calls from a shared start.
func (c *callClock) coarse(threshold time.Duration) bool {
	return c.timer != nil && threshold >= coarseMinThreshold
}

// begin returns the start instant of a call permitted by period st: the shared reading when
// st may use it and it is fresh, else a reading of the clock (which then becomes the shared
// one if there was none).
func (cb *CircuitBreaker) begin(st *circuitState) time.Duration {
	if !st.coarse || cb.events.Wants(callEvents) {
		return cb.now()
	}
	if r := cb.calls.reading.Load(); r >= 0 {
		return time.Duration(r)
	}
	now := cb.now()
	// The timer is armed after the swap: armed before, it could fire before the swap and
	// leave the reading in place with no timer to retire it.
	if cb.calls.reading.CompareAndSwap(-1, int64(now)) {
		cb.calls.timer.Reset(coarseGrain)
	}
	return now
}

// end reads the clock at the end of a call permitted by period st and, when the shared
// reading is fresh but more than coarseRefresh old, replaces it with the new one. It never
// revives a retired reading, which only begin does, with its timer.
func (cb *CircuitBreaker) end(st *circuitState) time.Duration {
	now := cb.now()
	if st.coarse {
		if r := cb.calls.reading.Load(); r >= 0 && int64(now)-r > int64(coarseRefresh) {
			cb.calls.reading.CompareAndSwap(r, int64(now))
		}
	}
	return now
}
