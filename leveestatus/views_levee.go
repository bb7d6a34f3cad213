package leveestatus

import (
	"net/http"

	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/priority"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/throttle"
)

// adaptiveLimiterDetails is one adaptive.Limiter in GET /details/adaptivelimiters: its
// Metrics and AlgorithmMetrics, the inputs of one algorithm only where it has them.
type adaptiveLimiterDetails struct {
	Algorithm           string   `json:"algorithm"`
	Limit               int      `json:"limit"`
	LimitEstimate       float64  `json:"limitEstimate"`
	MinLimit            int      `json:"minLimit"`
	MaxLimit            int      `json:"maxLimit"`
	InFlightCalls       int      `json:"inFlightCalls"`
	QueuedCalls         int      `json:"queuedCalls"`
	MaxQueuedCalls      int      `json:"maxQueuedCalls"`
	PermittedCalls      uint64   `json:"permittedCalls"`
	RejectedCalls       uint64   `json:"rejectedCalls"`
	DroppedCalls        uint64   `json:"droppedCalls"`
	NoLoadLatencyInMs   float64  `json:"noLoadLatencyInMs"`
	Probing             *bool    `json:"probing,omitempty"`      // Vegas
	ShortRoundTripInMs  *float64 `json:"shortRttInMs,omitempty"` // Gradient2
	LongRoundTripInMs   *float64 `json:"longRttInMs,omitempty"`  // Gradient2
	LatencyCeilingInMs  float64  `json:"latencyCeilingInMs"`
	MaxWaitDurationInMs float64  `json:"maxWaitDurationInMs"`
}

func adaptiveLimiterView(l *adaptive.Limiter) adaptiveLimiterDetails {
	m, a, cfg := l.Metrics(), l.AlgorithmMetrics(), l.Config()
	d := adaptiveLimiterDetails{
		Algorithm: a.Algorithm.String(), Limit: m.Limit, LimitEstimate: a.Estimate,
		MinLimit: cfg.MinLimit, MaxLimit: cfg.MaxLimit,
		InFlightCalls: m.InFlight, QueuedCalls: m.Queued, MaxQueuedCalls: max(0, cfg.MaxQueued),
		PermittedCalls: m.Permitted, RejectedCalls: m.Rejected, DroppedCalls: m.Dropped,
		NoLoadLatencyInMs: ms(m.NoLoadLatency), LatencyCeilingInMs: ms(cfg.LatencyCeiling),
		MaxWaitDurationInMs: ms(cfg.MaxWaitDuration),
	}
	switch a.Algorithm {
	case adaptive.Vegas:
		d.Probing = &a.Probing
	case adaptive.Gradient2:
		short, long := ms(a.ShortRTT), ms(a.LongRTT)
		d.ShortRoundTripInMs, d.LongRoundTripInMs = &short, &long
	}
	return d
}

// partitionDetails is one partition of a partitioned limiter.
type partitionDetails struct {
	Name           string  `json:"name"`
	Share          float64 `json:"share"`
	Limit          int     `json:"limit"`
	InFlightCalls  int     `json:"inFlightCalls"`
	DelayedCalls   int     `json:"delayedCalls"`
	PermittedCalls uint64  `json:"permittedCalls"`
	RejectedCalls  uint64  `json:"rejectedCalls"`
}

// keyedLimiterDetails is the part of a NewKeyed limiter's details that only it has.
type keyedLimiterDetails struct {
	Keys              int    `json:"keys"`
	MaxKeys           int    `json:"maxKeys"`
	KeyLimit          int    `json:"keyLimit"`
	MaxKeysRejections uint64 `json:"maxKeysRejectedCalls"`
	ShareRejections   uint64 `json:"shareRejectedCalls"`
}

// partitionedLimiterDetails is one adaptive.PartitionedLimiter in GET
// /details/partitionedlimiters: partitions for one of NewPartitioned (the implicit one last,
// named ""), keys for one of NewKeyed, whose partitions are keys that come and go.
type partitionedLimiterDetails struct {
	Algorithm     string               `json:"algorithm"`
	Limit         int                  `json:"limit"`
	InFlightCalls int                  `json:"inFlightCalls"`
	DelayedCalls  int                  `json:"delayedCalls"`
	Partitions    []partitionDetails   `json:"partitions,omitempty"`
	Keyed         *keyedLimiterDetails `json:"keyed,omitempty"`
}

func partitionedLimiterView(l *adaptive.PartitionedLimiter) partitionedLimiterDetails {
	m := l.Metrics()
	d := partitionedLimiterDetails{Limit: m.Limit, InFlightCalls: m.InFlight, DelayedCalls: m.Delayed}
	if l.IsKeyed() {
		k := l.KeyedMetrics()
		d.Algorithm = l.Config().Algorithm.String()
		d.Limit, d.InFlightCalls = k.Limit, k.InFlight
		d.Keyed = &keyedLimiterDetails{Keys: k.Keys, MaxKeys: l.MaxKeys(), KeyLimit: k.Share,
			MaxKeysRejections: k.KeysRefused, ShareRejections: k.Refused}
		return d
	}
	d.Algorithm = l.Config().Algorithm.String()
	d.Partitions = make([]partitionDetails, len(m.Partitions))
	for i, p := range m.Partitions {
		d.Partitions[i] = partitionDetails{Name: p.Name, Share: p.Share, Limit: p.Limit, InFlightCalls: p.InFlight,
			DelayedCalls: p.Delayed, PermittedCalls: p.Permitted, RejectedCalls: p.Rejected}
	}
	return d
}

// priorityDetails counts one priority's calls through a prioritizer.
type priorityDetails struct {
	Priority      string `json:"priority"`
	AdmittedCalls uint64 `json:"admittedCalls"`
	ShedCalls     uint64 `json:"shedCalls"`
	RejectedCalls uint64 `json:"rejectedCalls"`
	QueuedCalls   int64  `json:"queuedCalls"`
}

// prioritizerDetails is one adaptive.Prioritizer in GET /details/prioritizers, the
// priorities from critical down.
type prioritizerDetails struct {
	RejectionRate           float64           `json:"rejectionRate"`
	RejectionThreshold      string            `json:"rejectionThreshold"`      // priority.Format: "normal/50"
	RejectionThresholdLevel int               `json:"rejectionThresholdLevel"` // the same level, 0 to 500
	Priorities              []priorityDetails `json:"priorities"`
}

func prioritizerView(p *adaptive.Prioritizer) prioritizerDetails {
	m := p.Metrics()
	th := p.RejectionThreshold()
	d := prioritizerDetails{RejectionRate: m.RejectionRate, RejectionThreshold: priority.Format(th), RejectionThresholdLevel: int(th)}
	for i := len(m.Priorities) - 1; i >= 0; i-- {
		pm := m.Priorities[i]
		d.Priorities = append(d.Priorities, priorityDetails{Priority: pm.Priority.String(),
			AdmittedCalls: pm.Admitted, ShedCalls: pm.Shed, RejectedCalls: pm.Rejected, QueuedCalls: pm.Queued})
	}
	return d
}

// throttlerDetails is one throttle.Throttler in GET /details/throttlers.
type throttlerDetails struct {
	K                    float64 `json:"k"`
	WindowInMs           float64 `json:"windowInMs"`
	Requests             uint64  `json:"requests"`
	Accepts              uint64  `json:"accepts"`
	RejectionProbability float64 `json:"rejectionProbability"`
	PermittedCalls       uint64  `json:"permittedCalls"`
	ThrottledCalls       uint64  `json:"throttledCalls"`
}

func throttlerView(t *throttle.Throttler) throttlerDetails {
	m, cfg := t.Metrics(), t.Config()
	return throttlerDetails{K: cfg.K, WindowInMs: ms(cfg.Window), Requests: m.Requests, Accepts: m.Accepts,
		RejectionProbability: m.RejectionProbability, PermittedCalls: m.Permitted, ThrottledCalls: m.Throttled}
}

// keyedInstanceDetails is one key's instance, listed for a family made with PerKeySeries.
type keyedInstanceDetails struct {
	State         string `json:"state,omitempty"`         // a circuit breaker's
	Limit         *int   `json:"limit,omitempty"`         // an adaptive limiter's
	InFlightCalls *int   `json:"inFlightCalls,omitempty"` // an adaptive limiter's
}

// keyedDetails is one registry.KeyedFamily in GET /details/keyed: figures of the whole set,
// breakers counted per state (every state, by Resilience4j's names), and each key only for a
// family made with PerKeySeries.
type keyedDetails struct {
	NumberOfKeys         int                             `json:"numberOfKeys"`
	MaxKeys              int                             `json:"maxKeys"`
	IdleTimeoutInMs      float64                         `json:"idleTimeoutInMs"`
	Hits                 uint64                          `json:"hits"`
	Misses               uint64                          `json:"misses"`
	Created              uint64                          `json:"created"`
	CreateErrors         uint64                          `json:"createErrors"`
	EvictedCapacity      uint64                          `json:"evictedCapacity"`
	EvictedIdle          uint64                          `json:"evictedIdle"`
	Removed              uint64                          `json:"removed"`
	RefusedProtected     uint64                          `json:"refusedProtected"`
	CircuitBreakerStates map[string]int                  `json:"circuitBreakerStates,omitempty"`
	Instances            map[string]keyedInstanceDetails `json:"instances,omitempty"`
}

func keyedView(f *registry.KeyedFamily) keyedDetails {
	m, cfg := f.Metrics(), f.Config()
	d := keyedDetails{NumberOfKeys: m.Keys, MaxKeys: cfg.MaxKeys, IdleTimeoutInMs: ms(cfg.IdleTimeout),
		Hits: m.Hits, Misses: m.Misses, Created: m.Created, CreateErrors: m.CreateErrors,
		EvictedCapacity: m.EvictedCapacity, EvictedIdle: m.EvictedIdle, Removed: m.Removed,
		RefusedProtected: m.RefusedProtected}
	if counts, ok := f.CircuitBreakerStates(); ok {
		d.CircuitBreakerStates = map[string]int{}
		for s, n := range counts {
			d.CircuitBreakerStates[s.String()] = n
		}
	}
	if f.PerKeySeries() {
		d.Instances = map[string]keyedInstanceDetails{}
		for _, k := range f.Keys() {
			var v keyedInstanceDetails
			switch inst := k.Instance.(type) {
			case *circuitbreaker.CircuitBreaker:
				v.State = inst.State().String()
			case *adaptive.Limiter:
				lm := inst.Metrics()
				v.Limit, v.InFlightCalls = &lm.Limit, &lm.InFlight
			}
			d.Instances[k.Key] = v
		}
	}
	return d
}

// storeDecisions are a shared limiter's decisions by kind.
type storeDecisions struct {
	Permitted         uint64 `json:"permitted"`
	Refused           uint64 `json:"refused"`
	StoreRefused      uint64 `json:"storeRefused"`
	LocalPermitted    uint64 `json:"localPermitted"`
	LocalRefused      uint64 `json:"localRefused"`
	FailOpenPermitted uint64 `json:"failOpenPermitted"`
	FailClosedRefused uint64 `json:"failClosedRefused"`
}

// sharedRateLimiterDetails is one registry.StoreLimiter in GET /details/sharedratelimiters,
// with the names of Resilience4j's RateLimiter.Metrics where they apply.
type sharedRateLimiterDetails struct {
	AvailablePermissions   int            `json:"availablePermissions"`
	NumberOfWaitingThreads int            `json:"numberOfWaitingThreads"`
	LimitForPeriod         int            `json:"limitForPeriod"`
	FallbackLimitForPeriod int            `json:"fallbackLimitForPeriod"`
	NanosToWait            int64          `json:"nanosToWait"`
	Decisions              storeDecisions `json:"decisions"`
	StoreFailures          uint64         `json:"storeFailures"`
	BreakerRejections      uint64         `json:"breakerRejections"`
	FallbackEpisodes       uint64         `json:"fallbackEpisodes"`
	Degraded               bool           `json:"degraded"`
	Replicas               int            `json:"replicas"`
	Replica                string         `json:"replica"`
}

func sharedRateLimiterView(l registry.StoreLimiter) sharedRateLimiterDetails {
	m := l.StoreLimiterMetrics()
	return sharedRateLimiterDetails{
		AvailablePermissions: m.AvailablePermissions, NumberOfWaitingThreads: m.NumberOfWaitingCalls,
		LimitForPeriod: m.LimitForPeriod, FallbackLimitForPeriod: m.FallbackLimitForPeriod,
		NanosToWait: int64(m.NanosToWait),
		Decisions: storeDecisions{Permitted: m.Permitted, Refused: m.Refused, StoreRefused: m.StoreRefused,
			LocalPermitted: m.LocalPermitted, LocalRefused: m.LocalRefused,
			FailOpenPermitted: m.FailOpenPermitted, FailClosedRefused: m.FailClosedRefused},
		StoreFailures: m.StoreFailures, BreakerRejections: m.BreakerRejections,
		FallbackEpisodes: m.Episodes, Degraded: m.Degraded, Replicas: m.Replicas, Replica: m.Replica,
	}
}

// sharedCircuitBreakerDetails is one registry.StoreBreaker in GET
// /details/sharedcircuitbreakers: the shared record as this replica last saw it.
type sharedCircuitBreakerDetails struct {
	State          string `json:"state"`
	Version        int64  `json:"version"`
	Origin         string `json:"origin"`
	Replica        string `json:"replica"`
	Published      uint64 `json:"published"`
	Adopted        uint64 `json:"adopted"`
	Conflicts      uint64 `json:"conflicts"`
	StoreErrors    uint64 `json:"storeErrors"`
	LocalDecisions uint64 `json:"localDecisions"`
	TrialRefusals  uint64 `json:"trialRefusals"`
	StoreAvailable bool   `json:"storeAvailable"`
}

func sharedCircuitBreakerView(b registry.StoreBreaker) sharedCircuitBreakerDetails {
	m := b.StoreBreakerMetrics()
	return sharedCircuitBreakerDetails{State: m.State.String(), Version: m.Version, Origin: m.Origin,
		Replica: m.Replica, Published: m.Published, Adopted: m.Adopted, Conflicts: m.Conflicts,
		StoreErrors: m.StoreErrors, LocalDecisions: m.LocalDecisions, TrialRefusals: m.TrialRefusals,
		StoreAvailable: m.StoreAvailable}
}

// leveeKind is one of the patterns Resilience4j has no endpoint for: its path under
// /details/, the key of its list, and how to list, find and show its instances.
type leveeKind struct {
	path, listKey string
	pattern       registry.Pattern
	list          func(*registry.Registry) []named
	view          func(any) any
}

func namedOf[T interface{ Name() string }](vs []T) []named {
	out := make([]named, len(vs))
	for i, v := range vs {
		out[i] = named{v.Name(), v}
	}
	return out
}

var leveeKinds = []leveeKind{
	{"adaptivelimiters", "adaptiveLimiters", registry.AdaptiveLimiter,
		func(r *registry.Registry) []named { return namedOf(r.AdaptiveLimiters()) },
		func(v any) any { return adaptiveLimiterView(v.(*adaptive.Limiter)) }},
	{"partitionedlimiters", "partitionedLimiters", registry.PartitionedLimiter,
		func(r *registry.Registry) []named { return namedOf(r.PartitionedLimiters()) },
		func(v any) any { return partitionedLimiterView(v.(*adaptive.PartitionedLimiter)) }},
	{"prioritizers", "prioritizers", registry.Prioritizer,
		func(r *registry.Registry) []named { return namedOf(r.Prioritizers()) },
		func(v any) any { return prioritizerView(v.(*adaptive.Prioritizer)) }},
	{"throttlers", "throttlers", registry.Throttler,
		func(r *registry.Registry) []named { return namedOf(r.Throttlers()) },
		func(v any) any { return throttlerView(v.(*throttle.Throttler)) }},
	{"keyed", "keyed", registry.Keyed,
		func(r *registry.Registry) []named { return namedOf(r.KeyedFamilies()) },
		func(v any) any { return keyedView(v.(*registry.KeyedFamily)) }},
	{"sharedratelimiters", "sharedRateLimiters", registry.SharedRateLimiter,
		func(r *registry.Registry) []named { return namedOf(r.SharedRateLimiters()) },
		func(v any) any { return sharedRateLimiterView(v.(registry.StoreLimiter)) }},
	{"sharedcircuitbreakers", "sharedCircuitBreakers", registry.SharedCircuitBreaker,
		func(r *registry.Registry) []named { return namedOf(r.SharedCircuitBreakers()) },
		func(v any) any { return sharedCircuitBreakerView(v.(registry.StoreBreaker)) }},
}

// serveLeveeKind answers GET /details/{path}: {listKey: {name: details}}.
func (h *Handler) serveLeveeKind(k leveeKind) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		out := map[string]any{}
		for _, inst := range k.list(h.reg) {
			out[inst.name] = k.view(inst.v)
		}
		writeJSON(w, http.StatusOK, map[string]any{k.listKey: out})
	}
}

// serveLeveeInstance answers GET /details/{path}/{name}: one instance's details, or 404.
func (h *Handler) serveLeveeInstance(k leveeKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		for _, inst := range k.list(h.reg) {
			if inst.name == name {
				writeJSON(w, http.StatusOK, k.view(inst.v))
				return
			}
		}
		writeError(w, r, http.StatusNotFound, notFound(k.pattern, name))
	}
}

// leveeDetails is details for levee's own patterns: the details of /details/ and the calls
// their own counters count (admitted and refused), for the dashboard's calls per second.
func leveeDetails(inst any, counted int64) (details any, state string, calls int64) {
	switch v := inst.(type) {
	case *adaptive.Limiter:
		d := adaptiveLimiterView(v)
		return d, "", int64(d.PermittedCalls + d.RejectedCalls)
	case *adaptive.PartitionedLimiter:
		d := partitionedLimiterView(v)
		var n uint64
		for _, p := range d.Partitions {
			n += p.PermittedCalls + p.RejectedCalls
		}
		if d.Keyed != nil { // a NewKeyed limiter counts no admissions: the dashboard counts none
			return d, "", counted
		}
		return d, "", int64(n)
	case *adaptive.Prioritizer:
		d := prioritizerView(v)
		var n uint64
		for _, p := range d.Priorities {
			n += p.AdmittedCalls + p.ShedCalls + p.RejectedCalls
		}
		return d, "", int64(n)
	case *throttle.Throttler:
		d := throttlerView(v)
		return d, "", int64(d.PermittedCalls + d.ThrottledCalls)
	case *registry.KeyedFamily:
		d := keyedView(v)
		return d, "", int64(d.Hits + d.Misses)
	case registry.StoreLimiter:
		d := sharedRateLimiterView(v)
		c := d.Decisions
		return d, "", int64(c.Permitted + c.Refused + c.StoreRefused + c.LocalPermitted + c.LocalRefused +
			c.FailOpenPermitted + c.FailClosedRefused)
	case registry.StoreBreaker:
		return sharedCircuitBreakerView(v), "", counted
	}
	return nil, "", counted
}
