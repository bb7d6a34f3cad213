package adaptive

import (
	"math"
	"time"
)

// Gradient2Limit is Netflix's Gradient2Limit: it tracks the divergence between the latency of
// recent calls (shortRTT) and an exponential average of them over a long window (longRTT), and
// shrinks the limit when recent calls are slower than Tolerance times the long-term average:
//
//	longRTT  = longRTT × (1 − 2/(LongWindow+1)) + shortRTT × 2/(LongWindow+1)
//	           (a plain average of the first 10 samples; when longRTT / shortRTT > 2,
//	            longRTT × 0.95 after the update, to recover after a long overload)
//	InFlight < limit / 2:  unchanged (the caller, not the dependency, is the bottleneck)
//	gradient = max(0.5, min(1, Tolerance × longRTT / shortRTT))
//	new      = limit × gradient + QueueSize
//	limit    = limit × (1 − Smoothing) + new × Smoothing
//
// bounded by [MinLimit, MaxLimit]. shortRTT is the average over a window of int(limit)
// samples, as VegasLimit's (a drop acts at once, as a sample at Timeout). The defaults are
// Netflix's: Tolerance 1.5, Smoothing 0.2, LongWindow 600, QueueSize 4.
//
// Because the long average follows the latency up in a sustained overload, the baseline
// drifts: after LongWindow windows of slow calls the slow latency is the norm. LatencyCeiling
// caps longRTT so that it does not.
//
// Create one with NewAlgorithm and Config{Algorithm: Gradient2}.
type Gradient2Limit struct {
	cfg      Config
	estimate float64
	longRTT  float64 // nanoseconds; 0 before the first window
	warmup   int     // windows averaged into longRTT so far, up to gradient2Warmup
	shortRTT time.Duration

	windowSum      time.Duration
	windowCalls    int
	windowInFlight int
}

// gradient2Warmup is the number of windows Netflix's ExpAvgMeasurement averages plainly
// before it smooths.
const gradient2Warmup = 10

func newGradient2(cfg Config) *Gradient2Limit {
	return &Gradient2Limit{cfg: cfg, estimate: float64(cfg.InitialLimit)}
}

// Limit returns the current estimate.
func (g *Gradient2Limit) Limit() float64 { return g.estimate }

// LongRTT returns the long-term average latency, the baseline of the gradient, at most
// LatencyCeiling; 0 before the first window.
func (g *Gradient2Limit) LongRTT() time.Duration { return time.Duration(g.longRTT) }

// ShortRTT returns the average latency of the last window; 0 before the first.
func (g *Gradient2Limit) ShortRTT() time.Duration { return g.shortRTT }

// OnSample applies the rule above to s and returns the new estimate.
func (g *Gradient2Limit) OnSample(s Sample) float64 {
	e := g.estimate
	rtt, inFlight := s.RTT, s.InFlight
	if s.Dropped {
		g.windowSum, g.windowCalls, g.windowInFlight = 0, 0, 0
		rtt = max(rtt, g.cfg.Timeout)
	} else {
		g.windowSum += s.RTT
		g.windowCalls++
		g.windowInFlight = max(g.windowInFlight, s.InFlight)
		if g.windowCalls < int(e) {
			return e
		}
		rtt, inFlight = g.windowSum/time.Duration(g.windowCalls), g.windowInFlight
		g.windowSum, g.windowCalls, g.windowInFlight = 0, 0, 0
	}
	if rtt <= 0 {
		return e
	}
	g.shortRTT = rtt
	short := float64(rtt)
	if g.warmup < gradient2Warmup {
		g.warmup++
		g.longRTT += (short - g.longRTT) / float64(g.warmup)
	} else {
		f := 2 / float64(g.cfg.LongWindow+1)
		g.longRTT = g.longRTT*(1-f) + short*f
	}
	if g.longRTT/short > 2 {
		g.longRTT *= 0.95
	}
	if c := float64(g.cfg.LatencyCeiling); c > 0 && g.longRTT > c {
		g.longRTT = c
	}
	if float64(inFlight) < e/2 {
		return e
	}
	gradient := math.Max(0.5, math.Min(1, g.cfg.Tolerance*g.longRTT/short))
	next := e*gradient + float64(max(0, g.cfg.QueueSize))
	next = e*(1-g.cfg.Smoothing) + next*g.cfg.Smoothing
	g.estimate = clamp(&g.cfg, next)
	return g.estimate
}
