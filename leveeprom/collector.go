// Package leveeprom exports the instances of a levee registry to Prometheus under
// Resilience4j's Micrometer metric names, so that the Grafana boards and alerts written for
// resilience4j-micrometer work unchanged.
//
// NewCollector returns a prometheus.Collector; the application registers it on a registry of
// its own (never the default one: leveeprom registers nothing by itself) and serves it:
//
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(leveeprom.NewCollector(levreg))
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// # Families
//
// Every series has the label name (the instance's name) and one label per tag key given to
// WithTagKeys. The families, as resilience4j-micrometer 2.x exposes them through Micrometer's
// Prometheus registry:
//
//	resilience4j_circuitbreaker_state{state}                gauge: 1 for the current state, 0 for the
//	                                                        five others (closed, open, half_open,
//	                                                        disabled, forced_open, metrics_only)
//	resilience4j_circuitbreaker_calls_seconds{kind}         summary (_count, _sum in seconds) of the
//	                                                        calls that ended, kind successful, failed,
//	                                                        ignored
//	resilience4j_circuitbreaker_calls_seconds_max{kind}     gauge: the longest of those calls in the
//	                                                        last 2 minutes (Micrometer's decaying
//	                                                        maximum: 3 buckets rotated every 40s)
//	resilience4j_circuitbreaker_not_permitted_calls_total{kind="not_permitted"}
//	                                                        counter of refused calls: of NOT_PERMITTED
//	                                                        events, cumulative, as Micrometer's (see
//	                                                        "Refused calls" below)
//	resilience4j_circuitbreaker_buffered_calls{kind}        gauge: successful, failed calls in the window
//	resilience4j_circuitbreaker_slow_calls{kind}            gauge: slow successful, failed calls in the window
//	resilience4j_circuitbreaker_failure_rate                gauge: percent, -1 below the minimum number of calls
//	resilience4j_circuitbreaker_slow_call_rate              gauge: percent, -1 likewise
//	resilience4j_retry_calls_total{kind}                    counter: successful_without_retry,
//	                                                        successful_with_retry, failed_without_retry,
//	                                                        failed_with_retry
//	resilience4j_bulkhead_available_concurrent_calls        gauge: free permits
//	resilience4j_bulkhead_max_allowed_concurrent_calls      gauge: MaxConcurrentCalls
//	resilience4j_bulkhead_queue_depth, _queue_capacity, _thread_pool_size, _max_thread_pool_size,
//	_core_thread_pool_size, _active_thread_count, _available_thread_count
//	                                                        gauges of an async.WorkerPool (Resilience4j's
//	                                                        thread-pool bulkhead)
//	resilience4j_ratelimiter_available_permissions          gauge: may be negative (reservations)
//	resilience4j_ratelimiter_waiting_threads                gauge: callers (goroutines) waiting
//	resilience4j_timelimiter_calls_total{kind}              counter: successful, failed, timeout
//
// # levee's own families
//
// The patterns Resilience4j has none of get families of their own, named in the same style
// with the prefix levee_ (the constants of families_levee.go). Label values are bounded: a
// partition is one of the config's (the implicit one has partition=""), a priority one of
// the five names (sheddable, low, normal, high, critical), and a keyed family exports
// figures for its whole set of keys, never one series per key, unless it was made with
// registry.KeyedFamilyConfig.PerKeySeries, which needs MaxKeys of at most
// registry.MaxPerKeySeries; a key's series then leave with the key, at the next scrape
// after its eviction.
//
//	levee_adaptive_limit, _limit_estimate, _in_flight_calls, _queue_depth
//	                                                        gauges of an adaptive.Limiter (the limit, the
//	                                                        algorithm's estimate before truncation)
//	levee_adaptive_calls_total{kind}                        counter: permitted, rejected, dropped
//	levee_adaptive_no_load_latency_seconds                  gauge: the baseline (Vegas's no-load latency,
//	                                                        else the lowest latency measured)
//	levee_adaptive_short_rtt_seconds, _long_rtt_seconds     gauges of a Gradient2 limiter
//	levee_adaptive_probing                                  gauge of a Vegas limiter: 1 during a probe
//	levee_adaptive_algorithm_info{algorithm}                1, algorithm vegas, aimd or gradient2
//	levee_adaptive_partitioned_limit, _in_flight_calls, _delayed_calls
//	                                                        gauges of an adaptive.PartitionedLimiter
//	levee_adaptive_partition_limit{partition}, _share{partition}, _in_flight_calls{partition},
//	_delayed_calls{partition}                               gauges per partition (NewPartitioned): its share
//	                                                        of the limit in calls, its configured share
//	                                                        (0–1), its calls holding a permit, its refused
//	                                                        callers waiting out its RejectionDelay
//	levee_adaptive_partition_calls_total{partition,kind}    counter: permitted, rejected
//	levee_adaptive_keyed_keys, _key_limit                   gauges of a NewKeyed limiter: keys in flight,
//	                                                        each key's share in calls
//	levee_adaptive_keyed_rejected_calls_total{kind}         counter: max_keys, share
//	levee_prioritizer_calls_total{priority,kind}            counter: admitted, shed, rejected
//	levee_prioritizer_queued_calls{priority}                gauge: calls waiting at a limiter
//	levee_prioritizer_rejection_rate                        gauge: fraction of recent levels shed, 0–1
//	levee_prioritizer_rejection_threshold                   gauge: the lowest level not shed (0–500)
//	levee_throttle_window_requests, _window_accepts         gauges: counts within the throttle's window
//	levee_throttle_calls_total{kind}                        counter: permitted, throttled (local rejections)
//	levee_throttle_rejection_probability                    gauge: 0–1
//	levee_keyed_keys, levee_keyed_max_keys                  gauges of a registry.KeyedFamily
//	levee_keyed_lookups_total{kind}                         counter: hit, miss
//	levee_keyed_creations_total{kind}                       counter: successful, failed
//	levee_keyed_evictions_total{kind}                       counter: capacity, idle, removed
//	levee_keyed_refused_keys_total                          counter: new keys refused, every key protected
//	levee_keyed_circuitbreakers{state}                      gauge: breakers of the family in each state
//	levee_keyed_circuitbreaker_state{key,state}             PerKeySeries: 1 for a key's breaker's state
//	levee_keyed_adaptive_limit{key}, _in_flight_calls{key}  PerKeySeries: a key's adaptive.Limiter
//	levee_ratelimiter_store_decisions_total{kind}           counter of a registry.StoreLimiter: permitted,
//	                                                        refused (by the store), store_refused,
//	                                                        local_permitted, local_refused,
//	                                                        fail_open_permitted, fail_closed_refused
//	levee_ratelimiter_store_errors_total{kind}              counter: failed, not_permitted (store breaker)
//	levee_ratelimiter_store_fallback_episodes_total         counter: episodes of unavailability
//	levee_ratelimiter_store_degraded, _replicas, _limit_for_period, _fallback_limit_for_period,
//	_available_permissions, _waiting_threads                gauges
//	levee_circuitbreaker_store_record_state{state}          gauge of a registry.StoreBreaker: 1 for the
//	                                                        shared record's state
//	levee_circuitbreaker_store_record_version               gauge: the shared record's version
//	levee_circuitbreaker_store_record_info{origin,replica}  1: the replica that decided the record, and
//	                                                        this one
//	levee_circuitbreaker_store_transitions_total{kind}      counter: published, adopted, conflict
//	levee_circuitbreaker_store_errors_total, _local_decisions_total, _trial_refusals_total
//	                                                        counters
//	levee_circuitbreaker_store_available                    gauge: 1 while the store answers
//
// The local breakers of the shared patterns (leveeredis's store breaker, a shared breaker's
// local breaker) are ordinary breakers: add them with registry.Registry.AddCircuitBreaker
// and they report under resilience4j_circuitbreaker_* with their own names. The tag keys may
// not be partition, priority, key, algorithm, origin or replica, the labels of these families.
//
// Like Resilience4j's, the rates are percentages with a -1 sentinel rather than Prometheus'
// 0–1 ratios, and two gauges of the thread-pool bulkhead end in _count, a suffix Prometheus
// reserves for histograms and summaries (promlint reports them); the names are kept so that
// existing dashboards work.
//
// # Refused calls
//
// Resilience4j counts a breaker's refused calls twice, with two meanings, and levee keeps
// both: the actuator's notPermittedCalls (leveestatus' /circuitbreakers) is
// circuitbreaker.Metrics.NumberOfNotPermittedCalls, the count of the current state, which
// every transition but one into OPEN starts again from 0 and which counts FORCED_OPEN's
// refusals; Micrometer's resilience4j_circuitbreaker_not_permitted_calls_total here counts
// NOT_PERMITTED events, cumulative across transitions (use rate() on it), and not FORCED_OPEN's
// refusals, a state that publishes no event. After 3 refusals in OPEN and a transition to
// HALF_OPEN, the first is 0 and the second 3.
//
// # Cost
//
// Everything is read when Prometheus scrapes, so the collector adds nothing to any call's
// path: gauges and counters come from each instance's Metrics, and a breaker's calls summary,
// its maximum and the not-permitted counter from the breaker's own cumulative figures
// (circuitbreaker.CircuitBreaker.CallStats), which every breaker keeps whether or not it is
// observed. The collector subscribes to no breaker's events, so attaching it neither makes a
// breaker build an event per call nor time its calls with a second clock reading. Every call
// whose SUCCESS, ERROR or IGNORED_ERROR event is published counts, a late one (see
// circuitbreaker.Event.Late) included, as in Resilience4j; a DISABLED or FORCED_OPEN breaker
// publishes none, so its calls are not counted there either. A summary's _count and _sum are
// read one after the other, so a scrape during a call may count it in one and not yet in the
// other. The counts and sums of a breaker start from zero when the collector attaches it (added
// to the registry, or put in another's place; to Prometheus' rate functions a replacement is a
// counter reset); the maximum is the breaker's own decaying maximum (CallDurations.MaxDuration:
// the longest call of the last two minutes, three buckets rotated every 40 s from the breaker's
// New), so it may show a call that ended up to two minutes before the attachment.
package leveeprom

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

// Option configures a Collector.
type Option func(*options)

type options struct {
	tagKeys []string
}

// WithTagKeys sets the registry tags (registry.Registry.SetTags) that become labels of every
// series, as Resilience4j's custom tags. Prometheus needs the same label names on every series
// of a family, so the set is fixed when the collector is built: an instance without one of
// these tags gets the empty value, and an instance's tags outside the set are ignored.
//
// A key must be a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with "__"),
// other than name, kind and state, and given once; otherwise the collector is invalid and its
// registration on a prometheus.Registry fails with an error naming the key. Later calls add
// keys to those of earlier ones.
func WithTagKeys(keys ...string) Option {
	return func(o *options) { o.tagKeys = append(o.tagKeys, keys...) }
}

// Collector is a prometheus.Collector exporting the instances of a levee registry. Build it
// with NewCollector; it is safe for concurrent use.
type Collector struct {
	reg     *registry.Registry
	tagKeys []string
	err     error
	descs   descs

	unsubscribe func() // from the registry's events

	mu       sync.Mutex
	closed   bool
	breakers map[*circuitbreaker.CircuitBreaker]*breakerCalls
}

// breakerCalls holds one breaker's cumulative figures (CallStats) as they were when the
// collector attached it, so that its counters start from zero then.
type breakerCalls struct {
	base circuitbreaker.CallStats
}

// The kinds of the calls summary.
var callKinds = [3]string{"successful", "failed", "ignored"}

// callsOf returns the figures of kind k (an index of callKinds) in s.
func callsOf(s *circuitbreaker.CallStats, k int) *circuitbreaker.CallDurations {
	switch k {
	case 0:
		return &s.Successful
	case 1:
		return &s.Failed
	}
	return &s.Ignored
}

// errNilRegistry is the error of a collector made with a nil registry.
var errNilRegistry = errors.New("leveeprom: NewCollector needs a *registry.Registry, got nil")

var labelNameRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

func checkTagKeys(keys []string) error {
	for i, k := range keys {
		if !labelNameRE.MatchString(k) || strings.HasPrefix(k, "__") ||
			k == labelName || k == labelKind || k == labelState {
			return fmt.Errorf("leveeprom: tag key must be a label name ([a-zA-Z_][a-zA-Z0-9_]*, "+
				"not starting with __, not name, kind or state), got %q", k)
		}
		if slices.Contains(reservedLabels, k) {
			return fmt.Errorf("leveeprom: tag key must not be a label of levee's own families (%s), got %q",
				strings.Join(reservedLabels, ", "), k)
		}
		if slices.Contains(keys[:i], k) {
			return fmt.Errorf("leveeprom: tag key must be given once, got %q twice", k)
		}
	}
	return nil
}

// NewCollector returns a Collector exporting every instance of reg, those added later
// included, under Resilience4j's Micrometer names (see the package documentation). It
// subscribes to reg's events, to follow the circuit breakers reg holds, now and later, whose
// cumulative call figures it reads at each scrape; Close ends that subscription. An invalid
// option (see WithTagKeys), or a nil reg, makes a collector whose registration fails with the
// error (Describe sends invalid descriptors, so prometheus.Registerer.Register returns it) and
// whose collection reports it as an invalid metric.
func NewCollector(reg *registry.Registry, opts ...Option) *Collector {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	c := &Collector{
		reg:         reg,
		tagKeys:     slices.Clone(o.tagKeys),
		err:         checkTagKeys(o.tagKeys),
		unsubscribe: func() {},
		breakers:    map[*circuitbreaker.CircuitBreaker]*breakerCalls{},
	}
	if reg == nil {
		c.err = errNilRegistry
	}
	c.descs = newDescs(c.tagKeys, c.err)
	if c.err != nil || reg == nil {
		c.closed = true
		return c
	}
	// Subscribe before listing, so that no breaker added meanwhile is missed; attaching is
	// idempotent, and a removal is delivered after the breaker left the lists.
	c.unsubscribe = reg.Subscribe(c.onRegistryEvent)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cb := range reg.CircuitBreakers() {
		c.attachLocked(cb)
	}
	return c
}

func (c *Collector) onRegistryEvent(e registry.Event) {
	if e.Pattern != registry.CircuitBreaker {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if old, ok := e.Replaced.(*circuitbreaker.CircuitBreaker); ok {
		c.detachLocked(old)
	}
	cb, _ := e.Instance.(*circuitbreaker.CircuitBreaker)
	switch e.Type {
	case registry.EntryAdded, registry.EntryReplaced:
		c.attachLocked(cb)
	case registry.EntryRemoved:
		c.detachLocked(cb)
	}
}

func (c *Collector) attachLocked(cb *circuitbreaker.CircuitBreaker) {
	if cb == nil {
		return
	}
	if _, ok := c.breakers[cb]; ok {
		return
	}
	c.breakers[cb] = &breakerCalls{base: cb.CallStats()}
}

func (c *Collector) detachLocked(cb *circuitbreaker.CircuitBreaker) {
	delete(c.breakers, cb)
}

// Attached reports the number of circuit breakers whose call figures the collector exports.
func (c *Collector) Attached() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.breakers)
}

// Close ends the collector's subscription to the registry and forgets every breaker; it is
// idempotent. Unregister the collector from its
// prometheus.Registry first: a closed collector exports nothing.
func (c *Collector) Close() {
	// The registry delivers its events holding its own lock, and onRegistryEvent then takes
	// c.mu: unsubscribe outside c.mu.
	c.unsubscribe()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for cb := range c.breakers {
		c.detachLocked(cb)
	}
}

// Describe sends the Desc of every family, as prometheus.Collector; for an invalid collector,
// a Desc carrying the error, which makes its registration fail.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range allFamilies {
		ch <- c.descs[f]
	}
}

// Collect sends the current metrics of every instance of the registry, as
// prometheus.Collector: constant metrics read from each instance's Metrics and, for breakers,
// from their CallStats. Instances are visited pattern by pattern, sorted by name.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if c.err != nil {
		ch <- prometheus.NewInvalidMetric(c.descs[&famState], c.err)
		return
	}
	if closed {
		return
	}
	c.collectCircuitBreakers(ch)
	c.collectOthers(ch)
	c.collectLevee(ch)
}

// series emits the metrics of one instance: name and tag values are fixed, the extra label
// (kind or state) varies.
type series struct {
	c    *Collector
	ch   chan<- prometheus.Metric
	name string
	tags []string
}

func (c *Collector) series(ch chan<- prometheus.Metric, p registry.Pattern, name string) series {
	tags := make([]string, len(c.tagKeys))
	if len(tags) > 0 {
		m := c.reg.Tags(p, name)
		for i, k := range c.tagKeys {
			tags[i] = m[k]
		}
	}
	return series{c: c, ch: ch, name: name, tags: tags}
}

// values returns the label values in the Desc's order: name, the extra label, the tags.
func (s series) values(extra ...string) []string {
	out := make([]string, 0, 2+len(s.tags))
	out = append(out, s.name)
	out = append(out, extra...)
	return append(out, s.tags...)
}

// emit sends one sample of family f, of the family's type.
func (s series) emit(f *family, v float64, extra ...string) {
	m, err := prometheus.NewConstMetric(s.c.descs[f], f.typ, v, s.values(extra...)...)
	s.send(f, m, err)
}

// send sends m, or for a label value Prometheus refuses (a name or tag that is not valid
// UTF-8) an invalid metric carrying the error, which fails that scrape with it.
func (s series) send(f *family, m prometheus.Metric, err error) {
	if err != nil {
		m = prometheus.NewInvalidMetric(s.c.descs[f], err)
	}
	s.ch <- m
}

// The states of the state gauge, in Resilience4j's order.
var states = []circuitbreaker.State{
	circuitbreaker.Closed, circuitbreaker.Open, circuitbreaker.HalfOpen,
	circuitbreaker.Disabled, circuitbreaker.ForcedOpen, circuitbreaker.MetricsOnly,
}

// reading is one sample each instance of a pattern sends: its family, the value of the
// family's extra label ("" for none) and how to read it from the instance's metrics M.
type reading[M any] struct {
	f     *family
	extra string
	read  func(M) float64
}

// collectEach sends readings of every instance of one pattern: insts, named by name, whose
// metrics are read once per instance and scrape.
func collectEach[T any, M any](c *Collector, ch chan<- prometheus.Metric, p registry.Pattern,
	insts []T, name func(T) string, metrics func(T) M, readings []reading[M]) {
	for _, inst := range insts {
		s := c.series(ch, p, name(inst))
		sendReadings(s, metrics(inst), readings)
	}
}

// sendReadings sends the samples readings take from m.
func sendReadings[M any](s series, m M, readings []reading[M]) {
	for _, r := range readings {
		if r.extra == "" {
			s.emit(r.f, r.read(m))
		} else {
			s.emit(r.f, r.read(m), r.extra)
		}
	}
}

// num turns an integer figure into a sample's value.
func num[N int | int64](n N) float64 { return float64(n) }

func (c *Collector) collectCircuitBreakers(ch chan<- prometheus.Metric) {
	for _, cb := range c.reg.CircuitBreakers() {
		s := c.series(ch, registry.CircuitBreaker, cb.Name())
		m := cb.Metrics()
		for _, st := range states {
			v := 0.0
			if st == m.State {
				v = 1
			}
			s.emit(&famState, v, strings.ToLower(st.String()))
		}
		c.mu.Lock()
		b := c.breakers[cb]
		c.mu.Unlock()
		calls := cb.CallStats()
		base := calls
		if b != nil {
			base = b.base
		} else { // being attached right now: nothing counted yet
			calls.Successful.MaxDuration, calls.Failed.MaxDuration, calls.Ignored.MaxDuration = 0, 0, 0
		}
		for k, kind := range callKinds {
			now, then := callsOf(&calls, k), callsOf(&base, k)
			sum := float64(now.TotalDuration-then.TotalDuration) / 1e9
			m, err := prometheus.NewConstSummary(c.descs[&famCalls], now.Count-then.Count, sum, nil, s.values(kind)...)
			s.send(&famCalls, m, err)
		}
		for k, kind := range callKinds {
			// The decaying maximum cannot tell the calls before the attachment from those after:
			// 0 until a call of the kind has ended since, so that a maximum never stands beside a
			// count of 0.
			mx := callsOf(&calls, k).MaxDuration
			if callsOf(&calls, k).Count == callsOf(&base, k).Count {
				mx = 0
			}
			s.emit(&famCallsMax, mx.Seconds(), kind)
		}
		s.emit(&famNotPermitted, float64(calls.NotPermitted-base.NotPermitted), "not_permitted")
		sendReadings(s, m, breakerReadings)
	}
}

// The samples read from each instance's Metrics, in the order they are sent.
var (
	breakerReadings = []reading[circuitbreaker.Metrics]{
		{&famBuffered, "failed", func(m circuitbreaker.Metrics) float64 { return num(m.NumberOfFailedCalls) }},
		{&famBuffered, "successful", func(m circuitbreaker.Metrics) float64 { return num(m.NumberOfSuccessfulCalls) }},
		{&famSlow, "successful", func(m circuitbreaker.Metrics) float64 { return num(m.NumberOfSlowSuccessfulCalls) }},
		{&famSlow, "failed", func(m circuitbreaker.Metrics) float64 { return num(m.NumberOfSlowFailedCalls) }},
		{&famFailureRate, "", func(m circuitbreaker.Metrics) float64 { return float64(m.FailureRate) }},
		{&famSlowCallRate, "", func(m circuitbreaker.Metrics) float64 { return float64(m.SlowCallRate) }},
	}
	retryReadings = []reading[retry.Metrics]{
		{&famRetryCalls, "successful_without_retry", func(m retry.Metrics) float64 { return num(m.NumberOfSuccessfulCallsWithoutRetryAttempt) }},
		{&famRetryCalls, "successful_with_retry", func(m retry.Metrics) float64 { return num(m.NumberOfSuccessfulCallsWithRetryAttempt) }},
		{&famRetryCalls, "failed_without_retry", func(m retry.Metrics) float64 { return num(m.NumberOfFailedCallsWithoutRetryAttempt) }},
		{&famRetryCalls, "failed_with_retry", func(m retry.Metrics) float64 { return num(m.NumberOfFailedCallsWithRetryAttempt) }},
	}
	bulkheadReadings = []reading[bulkhead.Metrics]{
		{&famBHAvailable, "", func(m bulkhead.Metrics) float64 { return num(m.AvailableConcurrentCalls) }},
		{&famBHMax, "", func(m bulkhead.Metrics) float64 { return num(m.MaxAllowedConcurrentCalls) }},
	}
	workerPoolReadings = []reading[async.WorkerPoolMetrics]{
		{&famWPQueueDepth, "", func(m async.WorkerPoolMetrics) float64 { return num(m.QueueDepth) }},
		{&famWPQueueCap, "", func(m async.WorkerPoolMetrics) float64 { return num(m.QueueCapacity) }},
		{&famWPSize, "", func(m async.WorkerPoolMetrics) float64 { return num(m.ThreadPoolSize) }},
		{&famWPMaxSize, "", func(m async.WorkerPoolMetrics) float64 { return num(m.MaximumThreadPoolSize) }},
		{&famWPCoreSize, "", func(m async.WorkerPoolMetrics) float64 { return num(m.CoreThreadPoolSize) }},
		{&famWPActive, "", func(m async.WorkerPoolMetrics) float64 { return num(m.ActiveThreadCount) }},
		{&famWPAvailable, "", func(m async.WorkerPoolMetrics) float64 { return num(m.AvailableThreadCount) }},
	}
	rateLimiterReadings = []reading[ratelimiter.Metrics]{
		{&famRLAvailable, "", func(m ratelimiter.Metrics) float64 { return num(m.AvailablePermissions) }},
		{&famRLWaiting, "", func(m ratelimiter.Metrics) float64 { return num(m.NumberOfWaitingCalls) }},
	}
	timeLimiterReadings = []reading[timelimiter.Metrics]{
		{&famTLCalls, "successful", func(m timelimiter.Metrics) float64 { return num(m.NumberOfSuccessfulCalls) }},
		{&famTLCalls, "failed", func(m timelimiter.Metrics) float64 { return num(m.NumberOfFailedCalls) }},
		{&famTLCalls, "timeout", func(m timelimiter.Metrics) float64 { return num(m.NumberOfTimedOutCalls) }},
	}
)

// collectOthers sends the samples of every pattern but the breaker, pattern by pattern.
func (c *Collector) collectOthers(ch chan<- prometheus.Metric) {
	collectEach(c, ch, registry.Retry, c.reg.Retries(), (*retry.Retry).Name, (*retry.Retry).Metrics, retryReadings)
	collectEach(c, ch, registry.Bulkhead, c.reg.Bulkheads(), (*bulkhead.Bulkhead).Name, (*bulkhead.Bulkhead).Metrics, bulkheadReadings)
	collectEach(c, ch, registry.WorkerPool, c.reg.WorkerPools(), (*async.WorkerPool).Name, (*async.WorkerPool).Metrics, workerPoolReadings)
	collectEach(c, ch, registry.RateLimiter, c.reg.RateLimiters(), (*ratelimiter.RateLimiter).Name, (*ratelimiter.RateLimiter).Metrics, rateLimiterReadings)
	collectEach(c, ch, registry.TimeLimiter, c.reg.TimeLimiters(), (*timelimiter.TimeLimiter).Name, (*timelimiter.TimeLimiter).Metrics, timeLimiterReadings)
}
