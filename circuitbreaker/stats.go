package circuitbreaker

import "time"

// NumCallBuckets is the number of buckets of CallDurations.Buckets: one per bound of
// CallDurationBuckets, and one for the durations above the last bound.
const NumCallBuckets = len(callBucketBounds) + 1

// callBucketBounds are the inclusive upper bounds of the call-duration buckets: the Prometheus
// client's default buckets (0.005 s to 10 s), which leveeotel's DefaultBucketBoundaries export.
var callBucketBounds = [...]time.Duration{
	5 * time.Millisecond, 10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
}

// CallDurationBuckets returns the inclusive upper bounds of the buckets of
// CallDurations.Buckets: 5ms, 10ms, 25ms, 50ms, 100ms, 250ms, 500ms, 1s, 2.5s, 5s and 10s, the
// default buckets of the Prometheus client (in seconds, 0.005 to 10), which exporters use for
// the calls histogram. Bucket i counts the durations d with CallDurationBuckets()[i-1] < d <=
// CallDurationBuckets()[i]; the last bucket those above 10s. A new slice each call.
func CallDurationBuckets() []time.Duration {
	return append([]time.Duration(nil), callBucketBounds[:]...)
}

// CallStats is a snapshot of a breaker's cumulative per-call figures, kept since New across
// every state and period: what exporters need for Resilience4j's calls timer
// (resilience4j_circuitbreaker_calls_seconds, a Micrometer timer: count, total time and
// decaying maximum by kind) and a calls histogram, read when they scrape rather than fed by
// an event per call. Unlike Metrics, nothing in it is windowed or reset by a transition or
// Reset; it only grows (but for the decaying MaxDuration).
//
// A call counts under the kind its event has (SUCCESS, ERROR or IGNORED_ERROR) exactly when
// that event is published, whether or not anyone subscribes: a late outcome (see Permit) counts
// too, as Resilience4j's Micrometer timer times every call; calls ending while the breaker is
// DISABLED or FORCED_OPEN, which publish no per-call events, are not counted. Durations are the
// ones the breaker records (see the package comment's "Timing" for their precision, or the
// duration given to a WithDuration method).
type CallStats struct {
	Successful CallDurations // calls recorded as successes (EventSuccess)
	Failed     CallDurations // calls recorded as failures (EventError)
	Ignored    CallDurations // calls whose error was ignored (EventIgnoredError)
	// NotPermitted counts the refusals that published EventNotPermitted (not those of
	// FORCED_OPEN, as for the event), since New; Metrics' NumberOfNotPermittedCalls counts the
	// refusals of the current state only.
	NotPermitted uint64
}

// CallDurations are the cumulative figures of one kind of call in CallStats.
type CallDurations struct {
	// Count is the number of calls: the sum of Buckets.
	Count uint64
	// TotalDuration is the sum of their durations, in nanoseconds.
	TotalDuration time.Duration
	// MaxDuration is the longest duration of the last two minutes or so, as Micrometer's
	// TimeWindowMax with its defaults that Resilience4j's calls timer exports as _max: three
	// buckets rotated every 40 seconds of the breaker's monotonic clock (counted from New), so a
	// duration is forgotten between 80 and 120 seconds after the call ended. 0 once no call
	// ended in that time.
	MaxDuration time.Duration
	// Buckets counts the calls by duration: Buckets[i] those with CallDurationBuckets()[i-1] <
	// d <= CallDurationBuckets()[i], the last one those above 10s (non-cumulative counts,
	// OpenTelemetry's explicit-bucket layout).
	Buckets [NumCallBuckets]uint64
}

// The kinds of calls, indexing callStats.kinds.
const (
	statSuccessful = iota
	statFailed
	statIgnored
)

// callStats holds CallStats' figures, guarded by the breaker's record mutex (see
// CircuitBreaker.rec), which a call that records an outcome holds anyway for the window: adding
// a call's duration, incrementing its bucket and comparing it with the decaying maximum are
// plain operations inside that one critical section, rather than atomic ones of their own. The
// refusals are counted apart, in stripes, since a refusal records nothing else.
type callStats struct {
	kinds        [3]kindStats
	notPermitted stripedCounter
}

type kindStats struct {
	nanos   int64
	buckets [NumCallBuckets]uint64
	max     windowMax
}

// record adds a call of kind that took d and ended at end (time since the epoch). The caller
// holds the record mutex.
func (s *callStats) record(kind int, d, end time.Duration) {
	k := &s.kinds[kind]
	k.nanos += int64(d)
	k.buckets[bucketOf(d)]++
	k.max.record(end, d)
}

func bucketOf(d time.Duration) int {
	for i, b := range &callBucketBounds {
		if d <= b {
			return i
		}
	}
	return len(callBucketBounds)
}

func (k *kindStats) snapshot(now time.Duration) CallDurations {
	var c CallDurations
	for i, n := range k.buckets {
		c.Buckets[i] = n
		c.Count += n
	}
	c.TotalDuration = time.Duration(k.nanos)
	c.MaxDuration = k.max.poll(now)
	return c
}

// CallStats returns a snapshot of cb's cumulative per-call figures (see CallStats). The
// figures of the three kinds are read together, in one critical section that calls recording
// their outcomes also take, so that a call shows in all of them or in none; NotPermitted is
// read after them. It allocates nothing and never moves the breaker. A nil cb returns the zero
// CallStats.
func (cb *CircuitBreaker) CallStats() CallStats {
	if cb.unset() {
		return CallStats{}
	}
	now := cb.now()
	var s CallStats
	cb.rec.Lock()
	s.Successful = cb.stats.kinds[statSuccessful].snapshot(now)
	s.Failed = cb.stats.kinds[statFailed].snapshot(now)
	s.Ignored = cb.stats.kinds[statIgnored].snapshot(now)
	cb.rec.Unlock()
	s.NotPermitted = uint64(cb.stats.notPermitted.load())
	return s
}

// Micrometer's TimeWindowMax with its defaults: the largest sample of the last two minutes,
// in three buckets rotated every 40 seconds.
const (
	maxBuckets = 3
	maxExpiry  = 2 * time.Minute
	maxRotate  = maxExpiry / maxBuckets
)

// windowMax is Micrometer's TimeWindowMax on the breaker's clock (durations since its epoch).
// A sample goes into every bucket; a read gives the current bucket, the oldest, which has seen
// every sample of the last maxExpiry less at most one rotation period; each rotation empties
// the current bucket and makes the next one current. The record mutex guards it.
type windowMax struct {
	lastRotate int64 // the breaker's time of the last rotation
	current    int   // index of the bucket read
	// low is the largest sample since the last rotation: the bucket emptied last, which has
	// seen the fewest samples and so holds the smallest maximum. A sample no larger changes
	// no bucket.
	low     int64
	buckets [maxBuckets]int64
}

// record adds a sample v taken at now. The common case, a sample within the rotation period
// and no larger than low, is two comparisons.
func (m *windowMax) record(now, v time.Duration) {
	if int64(now)-m.lastRotate >= int64(maxRotate) || int64(v) > m.low {
		m.update(now, v)
	}
}

func (m *windowMax) update(now, v time.Duration) {
	m.rotate(now)
	if int64(v) <= m.low {
		return
	}
	m.low = int64(v)
	for i := range m.buckets {
		m.buckets[i] = max(m.buckets[i], int64(v))
	}
}

// poll returns the maximum at now.
func (m *windowMax) poll(now time.Duration) time.Duration {
	m.rotate(now)
	return time.Duration(m.buckets[m.current])
}

func (m *windowMax) rotate(now time.Duration) {
	elapsed := int64(now) - m.lastRotate
	if elapsed < int64(maxRotate) {
		return
	}
	m.low = 0
	if elapsed >= int64(maxExpiry) {
		m.buckets = [maxBuckets]int64{}
		m.current = 0
		m.lastRotate = int64(now) - elapsed%int64(maxRotate)
		return
	}
	for ; elapsed >= int64(maxRotate); elapsed -= int64(maxRotate) {
		m.buckets[m.current] = 0
		m.current = (m.current + 1) % maxBuckets
		m.lastRotate += int64(maxRotate)
	}
}
