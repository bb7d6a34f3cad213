package adaptive

import (
	"math"
	"time"
)

// VegasLimit estimates the calls queued at the dependency from the ratio of its no-load
// latency to the latency of recent calls, as TCP Vegas estimates the packets queued in the
// network (Brakmo and Peterson, "TCP Vegas: End to End Congestion Avoidance on a Global
// Internet", 1995) and Netflix's VegasLimit applies it to concurrent requests:
//
//	queue = limit × (1 − noLoadLatency / RTT)
//	lg    = max(1, log10(limit))
//	dropped call:               limit − lg
//	InFlight × 2 < int(limit):  unchanged (the caller, not the dependency, is the bottleneck)
//	queue < Alpha × lg:         limit + lg
//	queue > Beta × lg:          limit − lg
//	otherwise:                  unchanged
//
// RTT is the average over a window of int(limit) samples (a drop acts at once), InFlight the
// most any of them started with. noLoadLatency is the lowest RTT of any single sample.
//
// # Re-measuring the no-load latency
//
// A lowest-ever baseline never rises again: a dependency that became slower for good (a new
// region, a bigger payload) looks queued for ever and the limit stays too low. Every
// ProbeInterval (default 60 s, as Envoy's adaptive concurrency filter's
// min_rtt_calc_interval; NoProbe disables it) the limit drops to ProbeLimit (default 3,
// Envoy's min_concurrency) for ProbeSamples calls (default 50, Envoy's request_count); the
// lowest RTT among them becomes the new no-load latency and the limit returns to where it
// was. Netflix's VegasLimit instead resets the baseline to one ordinary sample now and then.
//
// # A latency ceiling
//
// In a long incident the probe measures the incident's latency, and the baseline would follow
// it up: the limit would stop protecting the dependency. LatencyCeiling (default none) caps
// the no-load latency, whatever the probe measures.
//
// Create one with NewAlgorithm and Config{Algorithm: Vegas}.
type VegasLimit struct {
	cfg      Config
	estimate float64
	noLoad   time.Duration // 0 before the first sample

	windowSum      time.Duration
	windowCalls    int
	windowInFlight int

	nextProbe  time.Time // zero before the first sample
	probing    bool
	probeFrom  float64 // the estimate to return to
	probeMin   time.Duration
	probeCalls int
}

// Limit returns the current estimate.
func (v *VegasLimit) Limit() float64 { return v.estimate }

// NoLoadLatency returns the baseline of the formula: the lowest RTT measured since New or
// the last probe, at most LatencyCeiling; 0 before the first sample.
func (v *VegasLimit) NoLoadLatency() time.Duration { return v.noLoad }

// Probing reports whether a probe at ProbeLimit is under way.
func (v *VegasLimit) Probing() bool { return v.probing }

func (v *VegasLimit) observeStale(s Sample) {
	if !s.Dropped && !v.probing {
		v.lower(s.RTT)
	}
}

// lower makes rtt the baseline when it is lower, capped at the ceiling.
func (v *VegasLimit) lower(rtt time.Duration) {
	if rtt <= 0 {
		return
	}
	if v.noLoad == 0 || rtt < v.noLoad {
		v.noLoad = rtt
	}
	if c := v.cfg.LatencyCeiling; c > 0 && v.noLoad > c {
		v.noLoad = c
	}
}

// OnSample applies the rule above to s and returns the new estimate.
func (v *VegasLimit) OnSample(s Sample) float64 {
	if v.probing {
		return v.probe(s)
	}
	if v.cfg.ProbeInterval > 0 {
		if v.nextProbe.IsZero() {
			v.nextProbe = s.At.Add(v.cfg.ProbeInterval)
		} else if !s.At.Before(v.nextProbe) {
			v.probing, v.probeFrom, v.probeMin, v.probeCalls = true, v.estimate, 0, 0
			v.windowSum, v.windowCalls, v.windowInFlight = 0, 0, 0
			v.estimate = clamp(&v.cfg, float64(v.cfg.ProbeLimit))
			return v.estimate
		}
	}
	e := v.estimate
	if s.Dropped {
		v.windowSum, v.windowCalls, v.windowInFlight = 0, 0, 0
		v.estimate = clamp(&v.cfg, e-math.Max(1, math.Log10(e)))
		return v.estimate
	}
	v.lower(s.RTT)
	v.windowSum += s.RTT
	v.windowCalls++
	v.windowInFlight = max(v.windowInFlight, s.InFlight)
	if v.windowCalls < int(e) {
		return e
	}
	rtt, inFlight := v.windowSum/time.Duration(v.windowCalls), v.windowInFlight
	v.windowSum, v.windowCalls, v.windowInFlight = 0, 0, 0
	if inFlight*2 < int(e) || rtt <= 0 {
		return e
	}
	lg := math.Max(1, math.Log10(e))
	// Multiplying first keeps exact cases exact: 9 calls at 11.25 ms over 10 ms queue 1.0.
	queue := e * float64(rtt-v.noLoad) / float64(rtt)
	switch {
	case queue < v.cfg.Alpha*lg:
		e += lg
	case queue > v.cfg.Beta*lg:
		e -= lg
	}
	v.estimate = clamp(&v.cfg, e)
	return v.estimate
}

// probe takes one sample of a probe: the lowest latency of ProbeSamples calls at ProbeLimit
// becomes the baseline.
func (v *VegasLimit) probe(s Sample) float64 {
	if !s.Dropped && s.RTT > 0 && (v.probeMin == 0 || s.RTT < v.probeMin) {
		v.probeMin = s.RTT
	}
	v.probeCalls++
	if v.probeCalls < v.cfg.ProbeSamples {
		return v.estimate
	}
	if v.probeMin > 0 {
		v.noLoad = 0
		v.lower(v.probeMin)
	}
	v.probing = false
	v.nextProbe = s.At.Add(v.cfg.ProbeInterval)
	v.estimate = v.probeFrom
	return v.estimate
}
