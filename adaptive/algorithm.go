package adaptive

import (
	"math"
	"time"
)

// LimitAlgorithm is the rule that moves a concurrency limit from the calls it is shown, as
// Netflix's concurrency-limits Limit interface: each call's round-trip time, the calls in flight
// when it started and whether it was dropped go in, a limit comes out. VegasLimit, AIMDLimit and
// Gradient2Limit implement it; a Limiter builds the one its Config.Algorithm names and feeds it
// every measured call, and code that measures calls elsewhere (a load balancer, a simulation)
// can create one with its constructor and feed it samples directly with OnSample.
//
// An algorithm is not safe for concurrent use: a Limiter calls it under its lock; a caller
// feeding one from several goroutines must lock around it.
type LimitAlgorithm interface {
	// Limit returns the current estimate of the concurrency the dependency sustains, in
	// [MinLimit, MaxLimit] of the Config it was made with. The calls admitted at once are its
	// integer part.
	Limit() float64
	// OnSample teaches the algorithm one measured call and returns the new estimate.
	OnSample(s Sample) float64
}

// Sample is one measured call as a LimitAlgorithm is shown it.
type Sample struct {
	// At is when the call ended, on the monotonic clock (time.Now()). Only the periodic
	// re-measurement of VegasLimit reads it.
	At time.Time
	// RTT is the call's latency, from the grant of its permit to its end.
	RTT time.Duration
	// InFlight is the number of calls running when the call started, itself included.
	InFlight int
	// Dropped reports that the dependency dropped the call or that it timed out: overload.
	Dropped bool
}

// Gradient2 is Netflix's Gradient2Limit: it compares the latency of recent calls with a
// long-term average of them and shrinks the limit when the recent calls are slower than
// Tolerance times the average. See Gradient2Limit for the formula.
const Gradient2 Algorithm = AIMD + 1

// staleObserver is implemented by the algorithms that keep a latency baseline: a Limiter shows
// them the calls taken under an older limit, which must not move the limit but still say how
// fast the dependency can answer.
type staleObserver interface {
	observeStale(s Sample)
}

// newAlgorithm returns the algorithm cfg names; cfg is valid and has its defaults.
func newAlgorithm(cfg Config) LimitAlgorithm {
	switch cfg.Algorithm {
	case AIMD:
		return &AIMDLimit{cfg: cfg, estimate: float64(cfg.InitialLimit)}
	case Gradient2:
		return newGradient2(cfg)
	}
	return &VegasLimit{cfg: cfg, estimate: float64(cfg.InitialLimit)}
}

func clamp(cfg *Config, v float64) float64 {
	return math.Max(float64(cfg.MinLimit), math.Min(float64(cfg.MaxLimit), v))
}

// NewAlgorithm returns a fresh LimitAlgorithm of the kind cfg.Algorithm names, configured by
// cfg with its zero fields replaced by the defaults, or the error New would return for cfg.
// The fields about queueing callers (MaxQueued, MaxWaitDuration) are checked and ignored.
func NewAlgorithm(cfg Config) (LimitAlgorithm, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return newAlgorithm(cfg), nil
}

// AIMDLimit is additive increase, multiplicative decrease, as TCP Reno's congestion window in
// congestion avoidance (Jacobson, "Congestion Avoidance and Control", 1988: the window grows
// by 1/window per acknowledgement, one segment per round trip, and shrinks by a factor on a
// loss) and Netflix's AIMDLimit (backoff ratio 0.9 on a drop or a call slower than Timeout):
//
//	dropped call, or RTT > Timeout:  limit × BackoffRatio
//	InFlight × 2 ≥ int(limit):       limit + 1/limit  (1 per limit calls: one per round trip)
//	otherwise:                       unchanged (the caller, not the dependency, is the bottleneck)
//
// bounded by [MinLimit, MaxLimit]. Netflix adds 1 on every call, which grows the limit by the
// limit every round trip (TCP's slow start, not its additive increase): the calls admitted
// under the larger limit come back slow only one round trip later, and the limit overshoots by
// half at small limits (4, 5, 6 around a capacity of 4, measured). A Limiter moves the limit
// once per round (a change of its integer part), so one backoff per round trip too: the other
// slow calls of that round were taken under the old limit.
//
// Set Timeout just above the dependency's unloaded latency: the limit then settles within a
// call of the concurrency past which the latency rises. Create one with NewAlgorithm and
// Config{Algorithm: AIMD}.
type AIMDLimit struct {
	cfg      Config
	estimate float64
}

// Limit returns the current estimate.
func (a *AIMDLimit) Limit() float64 { return a.estimate }

// OnSample applies the rule above to s and returns the new estimate.
func (a *AIMDLimit) OnSample(s Sample) float64 {
	e := a.estimate
	switch {
	case s.Dropped || s.RTT > a.cfg.Timeout:
		e *= a.cfg.BackoffRatio
	case s.InFlight*2 >= int(e):
		e += 1 / e
	}
	a.estimate = clamp(&a.cfg, e)
	return a.estimate
}

// noLoadLocked returns the baseline Metrics.NoLoadLatency reports: Vegas's no-load latency
// (re-measured by its probes), else the lowest latency measured.
func (l *Limiter) noLoadLocked() time.Duration {
	if v, ok := l.alg.(*VegasLimit); ok {
		return v.noLoad
	}
	return l.lowest
}

// AlgorithmMetrics is a snapshot of the inputs and state of a limiter's algorithm, for
// dashboards: what moved the limit.
type AlgorithmMetrics struct {
	// Algorithm is the algorithm in use.
	Algorithm Algorithm
	// Estimate is the algorithm's limit before it is truncated to whole calls.
	Estimate float64
	// NoLoadLatency is Vegas's baseline (0 for the others); Probing reports a Vegas probe
	// under way.
	NoLoadLatency time.Duration
	Probing       bool
	// ShortRTT and LongRTT are Gradient2's last window average and long-term average (0 for
	// the others).
	ShortRTT, LongRTT time.Duration
}

// AlgorithmMetrics returns a snapshot of l's algorithm, or the zero value for a nil l.
func (l *Limiter) AlgorithmMetrics() AlgorithmMetrics {
	if l.unset() {
		return AlgorithmMetrics{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	m := AlgorithmMetrics{Algorithm: l.cfg.Algorithm, Estimate: l.alg.Limit()}
	switch a := l.alg.(type) {
	case *VegasLimit:
		m.NoLoadLatency, m.Probing = a.noLoad, a.probing
	case *Gradient2Limit:
		m.ShortRTT, m.LongRTT = a.shortRTT, a.LongRTT()
	}
	return m
}
