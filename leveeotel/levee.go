package leveeotel

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/registry"
)

// The attribute keys of levee's own instruments besides name, kind and state.
const (
	keyPartition = "partition"
	keyPriority  = "priority"
	keyKey       = "key"
	keyAlgorithm = "algorithm"
	keyOrigin    = "origin"
	keyReplica   = "replica"
)

// leveeInstruments are the observable instruments of the patterns Resilience4j has none of,
// read by a callback of their own.
type leveeInstruments struct {
	alLimit, alInFlight, alQueue, alProbing, alInfo                 metric.Int64ObservableGauge
	alEstimate, alNoLoad, alShort, alLong                           metric.Float64ObservableGauge
	alCalls                                                         metric.Int64ObservableCounter
	plLimit, plInFlight, plDelayed                                  metric.Int64ObservableGauge
	partLimit, partInFlight, partDelayed                            metric.Int64ObservableGauge
	partShare                                                       metric.Float64ObservableGauge
	partCalls                                                       metric.Int64ObservableCounter
	klKeys, klShare                                                 metric.Int64ObservableGauge
	klRejected                                                      metric.Int64ObservableCounter
	prCalls                                                         metric.Int64ObservableCounter
	prQueued, prThreshold                                           metric.Int64ObservableGauge
	prRate                                                          metric.Float64ObservableGauge
	thRequests, thAccepts                                           metric.Int64ObservableGauge
	thCalls                                                         metric.Int64ObservableCounter
	thProbability                                                   metric.Float64ObservableGauge
	kfKeys, kfMax, kfBreakers, kfKeyState, kfKeyLimit, kfKeyFlight  metric.Int64ObservableGauge
	kfLookups, kfCreations, kfEvictions, kfRefused                  metric.Int64ObservableCounter
	slDecisions, slErrors, slEpisodes                               metric.Int64ObservableCounter
	slDegraded, slReplicas, slLimit, slFallback, slAvail, slWaiting metric.Int64ObservableGauge
	sbState, sbVersion, sbInfo, sbAvailable                         metric.Int64ObservableGauge
	sbTransitions, sbErrors, sbLocal, sbTrial                       metric.Int64ObservableCounter
}

// newLeveeInstruments creates them on meter and returns them with the list the callback is
// registered for.
func newLeveeInstruments(meter metric.Meter, keep func(error)) (*leveeInstruments, []metric.Observable) {
	var all []metric.Observable
	gauge := func(name, description, unit string) metric.Int64ObservableGauge {
		g, err := meter.Int64ObservableGauge(name, metric.WithDescription(description), metric.WithUnit(unit))
		keep(err)
		all = append(all, g)
		return g
	}
	fgauge := func(name, description, unit string) metric.Float64ObservableGauge {
		g, err := meter.Float64ObservableGauge(name, metric.WithDescription(description), metric.WithUnit(unit))
		keep(err)
		all = append(all, g)
		return g
	}
	counter := func(name, description, unit string) metric.Int64ObservableCounter {
		c, err := meter.Int64ObservableCounter(name, metric.WithDescription(description), metric.WithUnit(unit))
		keep(err)
		all = append(all, c)
		return c
	}
	in := &leveeInstruments{}
	in.alLimit = gauge("levee.adaptive.limit", "The current concurrency limit", "{call}")
	in.alEstimate = fgauge("levee.adaptive.limit.estimate", "The limit the algorithm computed, before it is truncated to whole calls", "{call}")
	in.alInFlight = gauge("levee.adaptive.in_flight.calls", "The number of calls holding a permit", "{call}")
	in.alQueue = gauge("levee.adaptive.queue.depth", "The number of callers waiting for a permit", "{call}")
	in.alCalls = counter("levee.adaptive.calls", "The number of calls permitted, rejected and ended as dropped", "{call}")
	in.alNoLoad = fgauge("levee.adaptive.no_load_latency", "The no-load latency the limit is measured against", "s")
	in.alShort = fgauge("levee.adaptive.short_rtt", "The average latency of the last window (Gradient2)", "s")
	in.alLong = fgauge("levee.adaptive.long_rtt", "The long-term average latency (Gradient2)", "s")
	in.alProbing = gauge("levee.adaptive.probing", "1 while a probe re-measures the no-load latency (Vegas), else 0", "")
	in.alInfo = gauge("levee.adaptive.algorithm.info", "The algorithm moving the limit", "")
	in.plLimit = gauge("levee.adaptive.partitioned.limit", "The current concurrency limit of all partitions", "{call}")
	in.plInFlight = gauge("levee.adaptive.partitioned.in_flight.calls", "The number of calls of all partitions holding a permit", "{call}")
	in.plDelayed = gauge("levee.adaptive.partitioned.delayed.calls", "The number of refused callers waiting out a rejection delay", "{call}")
	in.partLimit = gauge("levee.adaptive.partition.limit", "The partition's share of the limit in calls", "{call}")
	in.partShare = fgauge("levee.adaptive.partition.share", "The partition's guaranteed share of the limit, from 0 to 1", "")
	in.partInFlight = gauge("levee.adaptive.partition.in_flight.calls", "The number of the partition's calls holding a permit", "{call}")
	in.partDelayed = gauge("levee.adaptive.partition.delayed.calls", "The number of the partition's refused callers waiting out its rejection delay", "{call}")
	in.partCalls = counter("levee.adaptive.partition.calls", "The number of the partition's calls permitted and rejected", "{call}")
	in.klKeys = gauge("levee.adaptive.keyed.keys", "The number of keys with calls in flight", "{key}")
	in.klShare = gauge("levee.adaptive.keyed.key_limit", "Each key's share of the limit in calls", "{call}")
	in.klRejected = counter("levee.adaptive.keyed.rejected.calls", "The number of calls rejected because too many keys were in flight or their key used its share", "{call}")
	in.prCalls = counter("levee.prioritizer.calls", "The number of calls admitted, shed and rejected by priority", "{call}")
	in.prQueued = gauge("levee.prioritizer.queued.calls", "The number of calls waiting at a limiter by priority", "{call}")
	in.prRate = fgauge("levee.prioritizer.rejection.rate", "The fraction of recent levels shed, from 0 to 1", "")
	in.prThreshold = gauge("levee.prioritizer.rejection.threshold", "The lowest level not shed (0 to 500; the levels below it are shed)", "")
	in.thRequests = gauge("levee.throttle.window.requests", "The number of requests sent to the backend within the window", "{request}")
	in.thAccepts = gauge("levee.throttle.window.accepts", "The number of requests the backend accepted within the window", "{request}")
	in.thCalls = counter("levee.throttle.calls", "The number of calls permitted and throttled on the client side", "{call}")
	in.thProbability = fgauge("levee.throttle.rejection.probability", "The probability a call is throttled on the client side now, from 0 to 1", "")
	in.kfKeys = gauge("levee.keyed.keys", "The number of keys held", "{key}")
	in.kfMax = gauge("levee.keyed.max_keys", "The maximum number of keys held", "{key}")
	in.kfLookups = counter("levee.keyed.lookups", "The number of lookups that found their key (hit) or created it (miss)", "{lookup}")
	in.kfCreations = counter("levee.keyed.creations", "The number of instances created and creations failed", "{instance}")
	in.kfEvictions = counter("levee.keyed.evictions", "The number of keys evicted by cause", "{key}")
	in.kfRefused = counter("levee.keyed.refused.keys", "The number of new keys refused because every key held was protected", "{key}")
	in.kfBreakers = gauge("levee.keyed.circuitbreakers", "The number of circuit breakers in each state", "{circuitbreaker}")
	in.kfKeyState = gauge("levee.keyed.circuitbreaker.state", "The states of each key's circuit breaker", "")
	in.kfKeyLimit = gauge("levee.keyed.adaptive.limit", "The current concurrency limit of each key's limiter", "{call}")
	in.kfKeyFlight = gauge("levee.keyed.adaptive.in_flight.calls", "The number of calls holding a permit of each key's limiter", "{call}")
	in.slDecisions = counter("levee.ratelimiter.store.decisions", "The number of permission decisions by kind", "{decision}")
	in.slErrors = counter("levee.ratelimiter.store.errors", "The number of round trips to the store that failed or that the store breaker did not permit", "{error}")
	in.slEpisodes = counter("levee.ratelimiter.store.fallback.episodes", "The number of episodes of store unavailability begun", "{episode}")
	in.slDegraded = gauge("levee.ratelimiter.store.degraded", "1 during an episode of store unavailability, else 0", "")
	in.slReplicas = gauge("levee.ratelimiter.store.replicas", "The number of live replicas last seen in the store", "{replica}")
	in.slLimit = gauge("levee.ratelimiter.store.limit_for_period", "The fleet's limit per period", "{permission}")
	in.slFallback = gauge("levee.ratelimiter.store.fallback_limit_for_period", "This replica's local share of the limit during an episode", "{permission}")
	in.slAvail = gauge("levee.ratelimiter.store.available_permissions", "The number of available permissions", "{permission}")
	in.slWaiting = gauge("levee.ratelimiter.store.waiting_threads", "The number of waiting threads", "{goroutine}")
	in.sbState = gauge("levee.circuitbreaker.store.record.state", "The state of the shared record as last seen", "")
	in.sbVersion = gauge("levee.circuitbreaker.store.record.version", "The version of the shared record as last seen", "")
	in.sbInfo = gauge("levee.circuitbreaker.store.record.info", "The replica that decided the shared record, and this replica", "")
	in.sbTransitions = counter("levee.circuitbreaker.store.transitions", "The number of shared transitions published, adopted and lost in a conflict", "{transition}")
	in.sbErrors = counter("levee.circuitbreaker.store.errors", "The number of failed exchanges with the store", "{error}")
	in.sbLocal = counter("levee.circuitbreaker.store.local_decisions", "The number of transitions decided locally while the store was unavailable", "{transition}")
	in.sbTrial = counter("levee.circuitbreaker.store.trial_refusals", "The number of trial calls refused because another replica held the trial", "{call}")
	in.sbAvailable = gauge("levee.circuitbreaker.store.available", "1 when the last exchange with the store succeeded, else 0", "")
	return in, all
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// observeLevee is the callback of levee's own instruments.
func (m *Metrics) observeLevee(_ context.Context, o metric.Observer) error {
	in := m.levee
	reg := m.reg
	with := func(p registry.Pattern, name string, extra ...attribute.KeyValue) metric.ObserveOption {
		return metric.WithAttributeSet(attrSet(name, reg.Tags(p, name), extra...))
	}
	str := attribute.String
	kind := func(k string) attribute.KeyValue { return str(keyKind, k) }
	state := func(s circuitbreaker.State) attribute.KeyValue { return str(keyState, strings.ToLower(s.String())) }

	for _, l := range reg.AdaptiveLimiters() {
		n, p := l.Name(), registry.AdaptiveLimiter
		s, a := l.Metrics(), l.AlgorithmMetrics()
		o.ObserveInt64(in.alLimit, int64(s.Limit), with(p, n))
		o.ObserveFloat64(in.alEstimate, a.Estimate, with(p, n))
		o.ObserveInt64(in.alInFlight, int64(s.InFlight), with(p, n))
		o.ObserveInt64(in.alQueue, int64(s.Queued), with(p, n))
		o.ObserveInt64(in.alCalls, int64(s.Permitted), with(p, n, kind("permitted")))
		o.ObserveInt64(in.alCalls, int64(s.Rejected), with(p, n, kind("rejected")))
		o.ObserveInt64(in.alCalls, int64(s.Dropped), with(p, n, kind("dropped")))
		o.ObserveFloat64(in.alNoLoad, s.NoLoadLatency.Seconds(), with(p, n))
		switch a.Algorithm {
		case adaptive.Gradient2:
			o.ObserveFloat64(in.alShort, a.ShortRTT.Seconds(), with(p, n))
			o.ObserveFloat64(in.alLong, a.LongRTT.Seconds(), with(p, n))
		case adaptive.Vegas:
			o.ObserveInt64(in.alProbing, b2i(a.Probing), with(p, n))
		}
		o.ObserveInt64(in.alInfo, 1, with(p, n, str(keyAlgorithm, strings.ToLower(a.Algorithm.String()))))
	}
	for _, l := range reg.PartitionedLimiters() {
		n, p := l.Name(), registry.PartitionedLimiter
		if l.IsKeyed() {
			k := l.KeyedMetrics()
			o.ObserveInt64(in.plLimit, int64(k.Limit), with(p, n))
			o.ObserveInt64(in.plInFlight, int64(k.InFlight), with(p, n))
			o.ObserveInt64(in.plDelayed, int64(l.Metrics().Delayed), with(p, n))
			o.ObserveInt64(in.klKeys, int64(k.Keys), with(p, n))
			o.ObserveInt64(in.klShare, int64(k.Share), with(p, n))
			o.ObserveInt64(in.klRejected, int64(k.KeysRefused), with(p, n, kind("max_keys")))
			o.ObserveInt64(in.klRejected, int64(k.Refused), with(p, n, kind("share")))
			continue
		}
		s := l.Metrics()
		o.ObserveInt64(in.plLimit, int64(s.Limit), with(p, n))
		o.ObserveInt64(in.plInFlight, int64(s.InFlight), with(p, n))
		o.ObserveInt64(in.plDelayed, int64(s.Delayed), with(p, n))
		for _, pm := range s.Partitions {
			part := str(keyPartition, pm.Name)
			o.ObserveInt64(in.partLimit, int64(pm.Limit), with(p, n, part))
			o.ObserveFloat64(in.partShare, pm.Share, with(p, n, part))
			o.ObserveInt64(in.partInFlight, int64(pm.InFlight), with(p, n, part))
			o.ObserveInt64(in.partDelayed, int64(pm.Delayed), with(p, n, part))
			o.ObserveInt64(in.partCalls, int64(pm.Permitted), with(p, n, part, kind("permitted")))
			o.ObserveInt64(in.partCalls, int64(pm.Rejected), with(p, n, part, kind("rejected")))
		}
	}
	for _, pr := range reg.Prioritizers() {
		n, p := pr.Name(), registry.Prioritizer
		s := pr.Metrics()
		for _, pm := range s.Priorities {
			prio := str(keyPriority, pm.Priority.String())
			o.ObserveInt64(in.prCalls, int64(pm.Admitted), with(p, n, prio, kind("admitted")))
			o.ObserveInt64(in.prCalls, int64(pm.Shed), with(p, n, prio, kind("shed")))
			o.ObserveInt64(in.prCalls, int64(pm.Rejected), with(p, n, prio, kind("rejected")))
			o.ObserveInt64(in.prQueued, pm.Queued, with(p, n, prio))
		}
		o.ObserveFloat64(in.prRate, s.RejectionRate, with(p, n))
		o.ObserveInt64(in.prThreshold, int64(pr.RejectionThreshold()), with(p, n))
	}
	for _, t := range reg.Throttlers() {
		n, p := t.Name(), registry.Throttler
		s := t.Metrics()
		o.ObserveInt64(in.thRequests, int64(s.Requests), with(p, n))
		o.ObserveInt64(in.thAccepts, int64(s.Accepts), with(p, n))
		o.ObserveInt64(in.thCalls, int64(s.Permitted), with(p, n, kind("permitted")))
		o.ObserveInt64(in.thCalls, int64(s.Throttled), with(p, n, kind("throttled")))
		o.ObserveFloat64(in.thProbability, s.RejectionProbability, with(p, n))
	}
	for _, f := range reg.KeyedFamilies() {
		n, p := f.Name(), registry.Keyed
		s := f.Metrics()
		o.ObserveInt64(in.kfKeys, int64(s.Keys), with(p, n))
		o.ObserveInt64(in.kfMax, int64(f.Config().MaxKeys), with(p, n))
		o.ObserveInt64(in.kfLookups, int64(s.Hits), with(p, n, kind("hit")))
		o.ObserveInt64(in.kfLookups, int64(s.Misses), with(p, n, kind("miss")))
		o.ObserveInt64(in.kfCreations, int64(s.Created), with(p, n, kind("successful")))
		o.ObserveInt64(in.kfCreations, int64(s.CreateErrors), with(p, n, kind("failed")))
		o.ObserveInt64(in.kfEvictions, int64(s.EvictedCapacity), with(p, n, kind("capacity")))
		o.ObserveInt64(in.kfEvictions, int64(s.EvictedIdle), with(p, n, kind("idle")))
		o.ObserveInt64(in.kfEvictions, int64(s.Removed), with(p, n, kind("removed")))
		o.ObserveInt64(in.kfRefused, int64(s.RefusedProtected), with(p, n))
		if counts, ok := f.CircuitBreakerStates(); ok {
			for _, st := range breakerStates {
				o.ObserveInt64(in.kfBreakers, int64(counts[st.state]), with(p, n, str(keyState, st.name)))
			}
		}
		for _, k := range f.Keys() {
			key := str(keyKey, k.Key)
			switch v := k.Instance.(type) {
			case *circuitbreaker.CircuitBreaker:
				cur := v.State()
				for _, st := range breakerStates {
					o.ObserveInt64(in.kfKeyState, b2i(cur == st.state), with(p, n, key, str(keyState, st.name)))
				}
			case *adaptive.Limiter:
				lm := v.Metrics()
				o.ObserveInt64(in.kfKeyLimit, int64(lm.Limit), with(p, n, key))
				o.ObserveInt64(in.kfKeyFlight, int64(lm.InFlight), with(p, n, key))
			}
		}
	}
	for _, l := range reg.SharedRateLimiters() {
		n, p := l.Name(), registry.SharedRateLimiter
		s := l.StoreLimiterMetrics()
		for _, d := range []struct {
			kind string
			n    uint64
		}{
			{"permitted", s.Permitted}, {"refused", s.Refused}, {"store_refused", s.StoreRefused},
			{"local_permitted", s.LocalPermitted}, {"local_refused", s.LocalRefused},
			{"fail_open_permitted", s.FailOpenPermitted}, {"fail_closed_refused", s.FailClosedRefused},
		} {
			o.ObserveInt64(in.slDecisions, int64(d.n), with(p, n, kind(d.kind)))
		}
		o.ObserveInt64(in.slErrors, int64(s.StoreFailures), with(p, n, kind("failed")))
		o.ObserveInt64(in.slErrors, int64(s.BreakerRejections), with(p, n, kind("not_permitted")))
		o.ObserveInt64(in.slEpisodes, int64(s.Episodes), with(p, n))
		o.ObserveInt64(in.slDegraded, b2i(s.Degraded), with(p, n))
		o.ObserveInt64(in.slReplicas, int64(s.Replicas), with(p, n))
		o.ObserveInt64(in.slLimit, int64(s.LimitForPeriod), with(p, n))
		o.ObserveInt64(in.slFallback, int64(s.FallbackLimitForPeriod), with(p, n))
		o.ObserveInt64(in.slAvail, int64(s.AvailablePermissions), with(p, n))
		o.ObserveInt64(in.slWaiting, int64(s.NumberOfWaitingCalls), with(p, n))
	}
	for _, b := range reg.SharedCircuitBreakers() {
		n, p := b.Name(), registry.SharedCircuitBreaker
		s := b.StoreBreakerMetrics()
		for _, st := range breakerStates {
			o.ObserveInt64(in.sbState, b2i(s.State == st.state), with(p, n, state(st.state)))
		}
		o.ObserveInt64(in.sbVersion, s.Version, with(p, n))
		o.ObserveInt64(in.sbInfo, 1, with(p, n, str(keyOrigin, s.Origin), str(keyReplica, s.Replica)))
		o.ObserveInt64(in.sbTransitions, int64(s.Published), with(p, n, kind("published")))
		o.ObserveInt64(in.sbTransitions, int64(s.Adopted), with(p, n, kind("adopted")))
		o.ObserveInt64(in.sbTransitions, int64(s.Conflicts), with(p, n, kind("conflict")))
		o.ObserveInt64(in.sbErrors, int64(s.StoreErrors), with(p, n))
		o.ObserveInt64(in.sbLocal, int64(s.LocalDecisions), with(p, n))
		o.ObserveInt64(in.sbTrial, int64(s.TrialRefusals), with(p, n))
		o.ObserveInt64(in.sbAvailable, b2i(s.StoreAvailable), with(p, n))
	}
	return nil
}
