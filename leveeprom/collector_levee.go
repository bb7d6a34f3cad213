package leveeprom

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/registry"
)

// b2f is 1 for true, 0 for false.
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// stateName is a breaker state as Resilience4j's state label writes it.
func stateName(s circuitbreaker.State) string { return strings.ToLower(s.String()) }

// collectLevee sends the samples of the patterns Resilience4j has none of, pattern by
// pattern, instances sorted by name.
func (c *Collector) collectLevee(ch chan<- prometheus.Metric) {
	for _, l := range c.reg.AdaptiveLimiters() {
		s := c.series(ch, registry.AdaptiveLimiter, l.Name())
		m, a := l.Metrics(), l.AlgorithmMetrics()
		s.emit(&famALLimit, num(m.Limit))
		s.emit(&famALEstimate, a.Estimate)
		s.emit(&famALInFlight, num(m.InFlight))
		s.emit(&famALQueue, num(m.Queued))
		s.emit(&famALCalls, float64(m.Permitted), "permitted")
		s.emit(&famALCalls, float64(m.Rejected), "rejected")
		s.emit(&famALCalls, float64(m.Dropped), "dropped")
		s.emit(&famALNoLoad, m.NoLoadLatency.Seconds())
		switch a.Algorithm {
		case adaptive.Gradient2:
			s.emit(&famALShort, a.ShortRTT.Seconds())
			s.emit(&famALLong, a.LongRTT.Seconds())
		case adaptive.Vegas:
			s.emit(&famALProbing, b2f(a.Probing))
		}
		s.emit(&famALInfo, 1, strings.ToLower(a.Algorithm.String()))
	}
	for _, l := range c.reg.PartitionedLimiters() {
		s := c.series(ch, registry.PartitionedLimiter, l.Name())
		if l.IsKeyed() {
			k := l.KeyedMetrics()
			s.emit(&famPLLimit, num(k.Limit))
			s.emit(&famPLInFlight, num(k.InFlight))
			s.emit(&famPLDelayed, num(l.Metrics().Delayed))
			s.emit(&famKLKeys, num(k.Keys))
			s.emit(&famKLShare, num(k.Share))
			s.emit(&famKLRejected, float64(k.KeysRefused), "max_keys")
			s.emit(&famKLRejected, float64(k.Refused), "share")
			continue
		}
		m := l.Metrics()
		s.emit(&famPLLimit, num(m.Limit))
		s.emit(&famPLInFlight, num(m.InFlight))
		s.emit(&famPLDelayed, num(m.Delayed))
		for _, p := range m.Partitions {
			s.emit(&famPartLimit, num(p.Limit), p.Name)
			s.emit(&famPartShare, p.Share, p.Name)
			s.emit(&famPartFlight, num(p.InFlight), p.Name)
			s.emit(&famPartDelayed, num(p.Delayed), p.Name)
			s.emit(&famPartCalls, float64(p.Permitted), p.Name, "permitted")
			s.emit(&famPartCalls, float64(p.Rejected), p.Name, "rejected")
		}
	}
	for _, p := range c.reg.Prioritizers() {
		s := c.series(ch, registry.Prioritizer, p.Name())
		m := p.Metrics()
		for i := len(m.Priorities) - 1; i >= 0; i-- { // critical first
			pm := m.Priorities[i]
			name := pm.Priority.String()
			s.emit(&famPRCalls, float64(pm.Admitted), name, "admitted")
			s.emit(&famPRCalls, float64(pm.Shed), name, "shed")
			s.emit(&famPRCalls, float64(pm.Rejected), name, "rejected")
			s.emit(&famPRQueued, num(pm.Queued), name)
		}
		s.emit(&famPRRate, m.RejectionRate)
		s.emit(&famPRThreshold, float64(p.RejectionThreshold()))
	}
	for _, t := range c.reg.Throttlers() {
		s := c.series(ch, registry.Throttler, t.Name())
		m := t.Metrics()
		s.emit(&famTHRequests, float64(m.Requests))
		s.emit(&famTHAccepts, float64(m.Accepts))
		s.emit(&famTHCalls, float64(m.Permitted), "permitted")
		s.emit(&famTHCalls, float64(m.Throttled), "throttled")
		s.emit(&famTHProbability, m.RejectionProbability)
	}
	for _, f := range c.reg.KeyedFamilies() {
		c.collectKeyed(ch, f)
	}
	for _, l := range c.reg.SharedRateLimiters() {
		s := c.series(ch, registry.SharedRateLimiter, l.Name())
		m := l.StoreLimiterMetrics()
		for _, d := range []struct {
			kind string
			n    uint64
		}{
			{"permitted", m.Permitted}, {"refused", m.Refused}, {"store_refused", m.StoreRefused},
			{"local_permitted", m.LocalPermitted}, {"local_refused", m.LocalRefused},
			{"fail_open_permitted", m.FailOpenPermitted}, {"fail_closed_refused", m.FailClosedRefused},
		} {
			s.emit(&famSLDecisions, float64(d.n), d.kind)
		}
		s.emit(&famSLErrors, float64(m.StoreFailures), "failed")
		s.emit(&famSLErrors, float64(m.BreakerRejections), "not_permitted")
		s.emit(&famSLEpisodes, float64(m.Episodes))
		s.emit(&famSLDegraded, b2f(m.Degraded))
		s.emit(&famSLReplicas, num(m.Replicas))
		s.emit(&famSLLimit, num(m.LimitForPeriod))
		s.emit(&famSLFallback, num(m.FallbackLimitForPeriod))
		s.emit(&famSLAvailable, num(m.AvailablePermissions))
		s.emit(&famSLWaiting, num(m.NumberOfWaitingCalls))
	}
	for _, b := range c.reg.SharedCircuitBreakers() {
		s := c.series(ch, registry.SharedCircuitBreaker, b.Name())
		m := b.StoreBreakerMetrics()
		for _, st := range states {
			s.emit(&famSBState, b2f(st == m.State), stateName(st))
		}
		s.emit(&famSBVersion, float64(m.Version))
		s.emit(&famSBInfo, 1, m.Origin, m.Replica)
		s.emit(&famSBTrans, float64(m.Published), "published")
		s.emit(&famSBTrans, float64(m.Adopted), "adopted")
		s.emit(&famSBTrans, float64(m.Conflicts), "conflict")
		s.emit(&famSBErrors, float64(m.StoreErrors))
		s.emit(&famSBLocal, float64(m.LocalDecisions))
		s.emit(&famSBTrial, float64(m.TrialRefusals))
		s.emit(&famSBAvailable, b2f(m.StoreAvailable))
	}
}

// collectKeyed sends a keyed family's aggregates and, with PerKeySeries, its keys' series:
// the keys held at this scrape only, so that an evicted key's series are gone from the next.
func (c *Collector) collectKeyed(ch chan<- prometheus.Metric, f *registry.KeyedFamily) {
	s := c.series(ch, registry.Keyed, f.Name())
	m := f.Metrics()
	s.emit(&famKFKeys, num(m.Keys))
	s.emit(&famKFMax, num(f.Config().MaxKeys))
	s.emit(&famKFLookups, float64(m.Hits), "hit")
	s.emit(&famKFLookups, float64(m.Misses), "miss")
	s.emit(&famKFCreations, float64(m.Created), "successful")
	s.emit(&famKFCreations, float64(m.CreateErrors), "failed")
	s.emit(&famKFEvictions, float64(m.EvictedCapacity), "capacity")
	s.emit(&famKFEvictions, float64(m.EvictedIdle), "idle")
	s.emit(&famKFEvictions, float64(m.Removed), "removed")
	s.emit(&famKFRefused, float64(m.RefusedProtected))
	if counts, ok := f.CircuitBreakerStates(); ok {
		for _, st := range states {
			s.emit(&famKFBreakers, num(counts[st]), stateName(st))
		}
	}
	for _, k := range f.Keys() {
		switch v := k.Instance.(type) {
		case *circuitbreaker.CircuitBreaker:
			cur := v.State()
			for _, st := range states {
				s.emit(&famKFKeyState, b2f(st == cur), k.Key, stateName(st))
			}
		case *adaptive.Limiter:
			lm := v.Metrics()
			s.emit(&famKFKeyLimit, num(lm.Limit), k.Key)
			s.emit(&famKFKeyFlight, num(lm.InFlight), k.Key)
		}
	}
}
