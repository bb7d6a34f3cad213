package adaptive

import (
	"math"
	"time"
)

// Gradient2Limit is Netflix's Gradient2Limit: it tracks the divergence between the latency of
// recent calls (shortRTT) and an exponential average of them over a long window (longRTT), and
// shrinks the limit when recent calls are slower than Tolerance times the long-term average.
// At the end of every window, with limit the current estimate:
//
//	shortRTT = the window's average latency
//	longRTT  = sum / n of the first 10 windows (n of them so far), then
//	           longRTT × (1 − 2/(LongWindow+1)) + shortRTT × 2/(LongWindow+1)
//	if longRTT / shortRTT > 2:  the stored longRTT × 0.95 (recovery after a long overload;
//	                            this window's gradient still uses longRTT before it)
//	InFlight < limit / 2:       unchanged (the caller, not the dependency, is the bottleneck)
//	gradient = max(0.5, min(1, Tolerance × longRTT / shortRTT))
//	new      = limit × gradient + QueueSize
//	limit    = limit × (1 − Smoothing) + new × Smoothing
//
// bounded by [MinLimit, MaxLimit], exactly as Netflix's _update and its ExpAvgMeasurement
// (window 600, warm-up 10). The defaults are Netflix's: Tolerance 1.5, Smoothing 0.2,
// LongWindow 600, QueueSize 4 (a constant, Netflix's Gradient2 default; its first
// GradientLimit used a square root of the limit).
//
// Where levee differs: a window is int(limit) samples taken under the current limit (a
// Limiter's round), roughly one round trip, where Netflix's WindowedLimit closes one a
// second; and a drop acts at once, as a one-sample window at Timeout, where Netflix's
// Gradient2 ignores drops.
//
// Settling. At a steady latency the long average catches up with the short one, the gradient
// is 1, and the limit grows by QueueSize × Smoothing per window until the latency rises past
// Tolerance × longRTT; the limit settles at about capacity × Tolerance + QueueSize. So
// Tolerance 1 and a QueueSize of 1 or 2 keep it within a quarter of the capacity of a small
// dependency. The long average spans LongWindow windows: the 600 of the default are a few
// seconds of round trips, after which a sustained overload's latency is the norm and the
// limit drifts up with it (Netflix's 600 one-second windows span ten minutes). Give a
// LongWindow that spans longer than the incidents to ride out (100 round trips a second for
// an hour is 360,000), or cap the baseline with LatencyCeiling. The first 10 windows are the
// baseline: a limit starting far above the capacity (InitialLimit) learns the overloaded
// latency as normal, so start Gradient2 at or below the expected capacity.
//
// Create one with NewAlgorithm and Config{Algorithm: Gradient2}.
type Gradient2Limit struct {
	cfg      Config
	estimate float64
	longRTT  float64 // nanoseconds; 0 before the first window
	warmup   int     // windows averaged into longRTT so far, up to gradient2Warmup
	warmSum  float64 // the sum of those windows' averages, in nanoseconds
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
	// Netflix's ExpAvgMeasurement.add: a plain average of the first windows, then the
	// exponential one; the gradient uses the value it returns.
	if g.warmup < gradient2Warmup {
		g.warmup++
		g.warmSum += short
		g.longRTT = g.warmSum / float64(g.warmup)
	} else {
		f := 2 / float64(g.cfg.LongWindow+1)
		g.longRTT = g.longRTT*(1-f) + short*f
	}
	if c := float64(g.cfg.LatencyCeiling); c > 0 && g.longRTT > c {
		g.longRTT = c
	}
	long := g.longRTT
	if long/short > 2 {
		g.longRTT *= 0.95
	}
	if float64(inFlight) < e/2 {
		return e
	}
	gradient := math.Max(0.5, math.Min(1, g.cfg.Tolerance*long/short))
	next := e*gradient + float64(max(0, g.cfg.QueueSize))
	next = e*(1-g.cfg.Smoothing) + next*g.cfg.Smoothing
	g.estimate = clamp(&g.cfg, next)
	return g.estimate
}
