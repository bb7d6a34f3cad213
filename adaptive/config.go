package adaptive

import (
	"fmt"
	"strconv"
	"time"
)

// Algorithm is the rule that moves a Limiter's limit from what its calls measure.
type Algorithm int

// The algorithms.
const (
	// Vegas estimates the calls queued at the dependency from the ratio of the lowest latency
	// ever measured (the no-load latency) to the latency of each call, as TCP Vegas estimates
	// the packets queued in the network (Brakmo and Peterson, "TCP Vegas: End to End Congestion
	// Avoidance on a Global Internet", 1995) and as Netflix's concurrency-limits VegasLimit
	// applies it to concurrent requests:
	//
	//	queue = limit × (1 − noLoadLatency / latency)
	//	lg    = max(1, log10(limit))
	//	dropped call:          limit − lg
	//	inFlight × 2 < limit:  unchanged (the caller, not the dependency, is the bottleneck)
	//	queue < Alpha × lg:    limit + lg
	//	queue > Beta × lg:     limit − lg
	//	otherwise:             unchanged
	//
	// latency is the average over a window of limit calls taken under the current limit (a
	// drop acts at once). With the defaults Alpha = 1 and Beta = 2 (Netflix uses 3 and 6) the
	// limit settles one or two calls above the concurrency at which the dependency's latency
	// starts to rise. It is the default.
	Vegas Algorithm = iota
	// AIMD is additive increase, multiplicative decrease, as Netflix's AIMDLimit and TCP Reno's
	// congestion window: a dropped call, or one slower than Config.Timeout, multiplies the limit
	// by Config.BackoffRatio; any other call adds 1/limit (1 per round trip of the full
	// limit) while at least half the limit is in use. It needs no latency baseline, only a
	// clear overload signal. See AIMDLimit.
	AIMD
)

// String returns "VEGAS", "AIMD" or "GRADIENT2".
func (a Algorithm) String() string {
	switch a {
	case Vegas:
		return "VEGAS"
	case AIMD:
		return "AIMD"
	case Gradient2:
		return "GRADIENT2"
	}
	return "Algorithm(" + strconv.Itoa(int(a)) + ")"
}

// Default values. The limits and the AIMD values are those of Netflix's concurrency-limits
// (VegasLimit's initial limit 20 and maximum 1000, AIMDLimit's backoff ratio 0.9 and timeout
// 5 s); Alpha and Beta are levee's, see Vegas.
const (
	// DefaultInitialLimit is the limit before any call was measured.
	DefaultInitialLimit = 20
	// DefaultMinLimit is the lowest the limit goes.
	DefaultMinLimit = 1
	// DefaultMaxLimit is the highest the limit goes.
	DefaultMaxLimit = 1000
	// DefaultAlpha is Vegas's lower bound on the queued calls, in max(1, log10(limit)) calls.
	DefaultAlpha float64 = 1
	// DefaultBeta is Vegas's upper bound on the queued calls, in max(1, log10(limit)) calls.
	DefaultBeta float64 = 2
	// DefaultBackoffRatio is what AIMD multiplies the limit by on a drop.
	DefaultBackoffRatio float64 = 0.9
	// DefaultTimeout is the latency above which AIMD treats a call as dropped.
	DefaultTimeout = 5 * time.Second
	// DefaultMaxWaitDuration is how long a queued caller waits for a permit.
	DefaultMaxWaitDuration = time.Second
	// MaxLimitLimit is the largest MaxLimit New accepts.
	MaxLimitLimit = 1 << 20
)

// Config configures a Limiter. The zero value of each field means its default; DefaultConfig
// returns them all.
type Config struct {
	// Algorithm is Vegas (the default), AIMD or Gradient2.
	Algorithm Algorithm

	// InitialLimit is the limit before any call was measured, in [MinLimit, MaxLimit].
	// Default 20.
	InitialLimit int
	// MinLimit is the lowest the limit goes, in [1, MaxLimit]. Default 1.
	MinLimit int
	// MaxLimit is the highest the limit goes, in [MinLimit, MaxLimitLimit]. Default 1000.
	MaxLimit int

	// Alpha and Beta bound Vegas's estimate of the calls queued at the dependency, in units of
	// max(1, log10(limit)) calls: below Alpha the limit grows, above Beta it shrinks. Alpha
	// must be > 0 and Beta > Alpha. Defaults 1 and 2. AIMD ignores them.
	Alpha, Beta float64

	// BackoffRatio is what AIMD multiplies the limit by on a dropped or too slow call, in
	// [0.5, 1). Default 0.9. Vegas ignores it.
	BackoffRatio float64
	// Timeout is the latency above which AIMD treats a call as dropped, > 0. Default 5 s.
	// Vegas ignores it.
	Timeout time.Duration

	// MaxQueued is how many callers may wait for a permit when the limit is reached, at least
	// 0. 0, the default, queues nobody: a caller finding the limit reached is refused at once.
	MaxQueued int
	// MaxWaitDuration is how long a queued caller waits for a permit before it is refused,
	// > 0. Default 1 s. Only used when MaxQueued > 0. The caller's context can end the wait
	// sooner.
	MaxWaitDuration time.Duration

	// Tolerance is how much slower than their long-term average Gradient2 lets recent calls
	// be before it shrinks the limit, as a ratio >= 1 (1.5: 50 % slower). Default 1.5.
	Tolerance float64
	// Smoothing is the weight of each new Gradient2 estimate, in (0, 1]. Default 0.2.
	Smoothing float64
	// QueueSize is the headroom Gradient2 adds to the limit at every window, in calls, in
	// [1, MaxLimitLimit]. Default 4; NoQueueSize for none.
	QueueSize int
	// LongWindow is the number of windows Gradient2's long-term latency average spans, in
	// [1, 1e6]. Default 600.
	LongWindow int

	// ProbeInterval is how often Vegas re-measures its no-load latency, >= ProbeSamples ×
	// the unloaded latency to make sense. Default 60 s; NoProbe disables it.
	ProbeInterval time.Duration
	// ProbeLimit is the limit during a probe, in [MinLimit, MaxLimit]. Default 3 (at least
	// MinLimit).
	ProbeLimit int
	// ProbeSamples is the number of calls a probe measures, in [1, 1e6]. Default 50.
	ProbeSamples int
	// LatencyCeiling caps the baseline of Vegas (its no-load latency) and of Gradient2 (its
	// long-term average), >= 0, so that a long incident cannot make slow the new normal.
	// Default 0: no ceiling.
	LatencyCeiling time.Duration
}

// DefaultConfig returns the configuration with every default filled in: Vegas, limit 20 in
// [1, 1000], Alpha 1, Beta 2, no queue.
func DefaultConfig() Config { return Config{}.withDefaults() }

func (c Config) withDefaults() Config {
	if c.InitialLimit == 0 {
		c.InitialLimit = DefaultInitialLimit
	}
	if c.MinLimit == 0 {
		c.MinLimit = DefaultMinLimit
	}
	if c.MaxLimit == 0 {
		c.MaxLimit = DefaultMaxLimit
	}
	if c.Alpha == 0 {
		c.Alpha = DefaultAlpha
	}
	if c.Beta == 0 {
		c.Beta = DefaultBeta
	}
	if c.BackoffRatio == 0 {
		c.BackoffRatio = DefaultBackoffRatio
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxWaitDuration == 0 {
		c.MaxWaitDuration = DefaultMaxWaitDuration
	}
	c = c.withAlgorithmDefaults()
	return c
}

func (c Config) validate() error {
	switch {
	case c.Algorithm != Vegas && c.Algorithm != AIMD && c.Algorithm != Gradient2:
		return fmt.Errorf("adaptive: Algorithm must be Vegas, AIMD or Gradient2, got %v", c.Algorithm)
	case c.MaxLimit < 1 || c.MaxLimit > MaxLimitLimit:
		return fmt.Errorf("adaptive: MaxLimit must be in [1, %d], got %d", MaxLimitLimit, c.MaxLimit)
	case c.MinLimit < 1 || c.MinLimit > c.MaxLimit:
		return fmt.Errorf("adaptive: MinLimit must be in [1, MaxLimit (%d)], got %d", c.MaxLimit, c.MinLimit)
	case c.InitialLimit < c.MinLimit || c.InitialLimit > c.MaxLimit:
		return fmt.Errorf("adaptive: InitialLimit must be in [MinLimit (%d), MaxLimit (%d)], got %d",
			c.MinLimit, c.MaxLimit, c.InitialLimit)
	case !(c.Alpha > 0) || c.Alpha > 1e6:
		return fmt.Errorf("adaptive: Alpha must be in (0, 1e6], got %v", c.Alpha)
	case !(c.Beta > c.Alpha) || c.Beta > 1e6:
		return fmt.Errorf("adaptive: Beta must be in (Alpha (%v), 1e6], got %v", c.Alpha, c.Beta)
	case !(c.BackoffRatio >= 0.5 && c.BackoffRatio < 1):
		return fmt.Errorf("adaptive: BackoffRatio must be in [0.5, 1), got %v", c.BackoffRatio)
	case c.Timeout < 0:
		return fmt.Errorf("adaptive: Timeout must be > 0, got %v", c.Timeout)
	case c.MaxQueued < 0:
		return fmt.Errorf("adaptive: MaxQueued must be >= 0, got %d", c.MaxQueued)
	case c.MaxWaitDuration < 0:
		return fmt.Errorf("adaptive: MaxWaitDuration must be > 0, got %v", c.MaxWaitDuration)
	}
	return c.validateAlgorithm()
}
