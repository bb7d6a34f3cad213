package adaptive

import (
	"fmt"
	"math"
	"time"
)

// Defaults of the Gradient2 fields (Netflix's Gradient2Limit) and of Vegas's re-measurement
// (Envoy's adaptive concurrency filter).
const (
	// DefaultTolerance is Gradient2's Tolerance.
	DefaultTolerance float64 = 1.5
	// DefaultSmoothing is Gradient2's Smoothing.
	DefaultSmoothing float64 = 0.2
	// DefaultQueueSize is Gradient2's QueueSize.
	DefaultQueueSize = 4
	// DefaultLongWindow is Gradient2's LongWindow.
	DefaultLongWindow = 600
	// DefaultProbeInterval is how often Vegas re-measures its no-load latency.
	DefaultProbeInterval = 60 * time.Second
	// DefaultProbeLimit is the limit during a probe.
	DefaultProbeLimit = 3
	// DefaultProbeSamples is the number of calls a probe measures.
	DefaultProbeSamples = 50
)

// Explicit zeros for the fields whose zero value means their default.
const (
	// NoProbe, as Config.ProbeInterval, disables Vegas's re-measurement: the no-load latency is
	// then the lowest ever measured.
	NoProbe time.Duration = math.MinInt64
	// NoQueueSize, as Config.QueueSize, gives Gradient2 no headroom.
	NoQueueSize = math.MinInt
)

func (c Config) withAlgorithmDefaults() Config {
	if c.Tolerance == 0 {
		c.Tolerance = DefaultTolerance
	}
	if c.Smoothing == 0 {
		c.Smoothing = DefaultSmoothing
	}
	if c.QueueSize == 0 {
		c.QueueSize = DefaultQueueSize
	}
	if c.LongWindow == 0 {
		c.LongWindow = DefaultLongWindow
	}
	if c.ProbeInterval == 0 {
		c.ProbeInterval = DefaultProbeInterval
	}
	if c.ProbeLimit == 0 {
		c.ProbeLimit = max(min(DefaultProbeLimit, c.MaxLimit), c.MinLimit)
	}
	if c.ProbeSamples == 0 {
		c.ProbeSamples = DefaultProbeSamples
	}
	return c
}

// validateAlgorithm checks the fields withAlgorithmDefaults filled; the explicit zeros stay
// as they are (Config returns them), and any other negative value is refused.
func (c Config) validateAlgorithm() error {
	switch {
	case !(c.Tolerance >= 1) || c.Tolerance > 1e6:
		return fmt.Errorf("adaptive: Tolerance must be in [1, 1e6], got %v", c.Tolerance)
	case !(c.Smoothing > 0 && c.Smoothing <= 1):
		return fmt.Errorf("adaptive: Smoothing must be in (0, 1], got %v", c.Smoothing)
	case c.QueueSize != NoQueueSize && (c.QueueSize < 0 || c.QueueSize > MaxLimitLimit):
		return fmt.Errorf("adaptive: QueueSize must be in [0, %d] or NoQueueSize, got %d", MaxLimitLimit, c.QueueSize)
	case c.LongWindow < 1 || c.LongWindow > 1e6:
		return fmt.Errorf("adaptive: LongWindow must be in [1, 1000000], got %d", c.LongWindow)
	case c.ProbeInterval < 0 && c.ProbeInterval != NoProbe:
		return fmt.Errorf("adaptive: ProbeInterval must be > 0 or NoProbe, got %v", c.ProbeInterval)
	case c.ProbeLimit < c.MinLimit || c.ProbeLimit > c.MaxLimit:
		return fmt.Errorf("adaptive: ProbeLimit must be in [MinLimit (%d), MaxLimit (%d)], got %d", c.MinLimit, c.MaxLimit, c.ProbeLimit)
	case c.ProbeSamples < 1 || c.ProbeSamples > 1e6:
		return fmt.Errorf("adaptive: ProbeSamples must be in [1, 1000000], got %d", c.ProbeSamples)
	case c.LatencyCeiling < 0:
		return fmt.Errorf("adaptive: LatencyCeiling must be >= 0, got %v", c.LatencyCeiling)
	}
	return nil
}
