package leveeconfig

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/throttle"
)

func init() {
	goAliases[Adaptive] = map[string]string{
		"Algorithm": "limitAlgorithm", "MaxLimitLimit": "1048576", "NoQueueSize": "0", "NoProbe": "0",
		"Vegas": "VEGAS", "Gradient2": "GRADIENT2",
	}
	goAliases[Throttle] = map[string]string{"RecordErrors": "recordExceptions", "MaxWindowBuckets": "1000"}
}

// floatIn reads a float in the range lo..hi, each end open or closed as loOpen and hiOpen
// say, and reports the range in the file's words.
func (r *reader) floatIn(key string, lo, hi float64, loOpen, hiOpen bool, dst *float64) {
	f, v := r.float(key)
	if v == nil {
		return
	}
	okLo := f > lo || !loOpen && f == lo
	okHi := f < hi || !hiOpen && f == hi
	if !okLo || !okHi {
		l, h := "[", "]"
		if loOpen {
			l = "("
		}
		if hiOpen {
			h = ")"
		}
		r.failf(v, "must be in %s%s, %s%s, got %s", l, num(lo), num(hi), h, strings.TrimSpace(v.scalar))
		return
	}
	*dst = f
}

// num renders a bound as the patterns' errors do: 1e6, 0.5.
func num(f float64) string {
	return strings.Replace(strconv.FormatFloat(f, 'g', -1, 64), "e+0", "e", 1)
}

func (r *reader) adaptive() adaptive.Config {
	var c adaptive.Config
	if v := r.p["limitAlgorithm"]; v != nil {
		switch norm(v.scalar) {
		case "vegas":
			c.Algorithm = adaptive.Vegas
		case "aimd":
			c.Algorithm = adaptive.AIMD
		case "gradient2":
			c.Algorithm = adaptive.Gradient2
		default:
			r.failf(v, "must be VEGAS, AIMD or GRADIENT2, got %q", v.scalar)
		}
	}
	for key, dst := range map[string]*int{"initialLimit": &c.InitialLimit, "minLimit": &c.MinLimit, "maxLimit": &c.MaxLimit,
		"probeLimit": &c.ProbeLimit} {
		if n, v := r.intIn(key, 1, adaptive.MaxLimitLimit); v != nil {
			*dst = n
		}
	}
	for key, dst := range map[string]*int{"probeSamples": &c.ProbeSamples, "longWindow": &c.LongWindow} {
		if n, v := r.intIn(key, 1, 1e6); v != nil {
			*dst = n
		}
	}
	if n, v := r.int("maxQueued", 0); v != nil {
		c.MaxQueued = n
	}
	if n, v := r.intIn("queueSize", 0, adaptive.MaxLimitLimit); v != nil {
		c.QueueSize = n
		if n == 0 {
			c.QueueSize = adaptive.NoQueueSize // 0 is no headroom, not the default 4
		}
	}
	r.positive("maxWaitDuration", time.Nanosecond, &c.MaxWaitDuration)
	r.positive("timeout", time.Nanosecond, &c.Timeout)
	if d, v := r.dur("probeInterval"); v != nil {
		c.ProbeInterval = d
		if d == 0 {
			c.ProbeInterval = adaptive.NoProbe // 0 never probes, not the default 60s
		}
	}
	if d, v := r.dur("latencyCeiling"); v != nil {
		c.LatencyCeiling = d
	}
	r.floatIn("alpha", 0, 1e6, true, false, &c.Alpha)
	r.floatIn("beta", 0, 1e6, true, false, &c.Beta)
	r.floatIn("backoffRatio", 0.5, 1, false, true, &c.BackoffRatio)
	r.floatIn("tolerance", 1, 1e6, false, false, &c.Tolerance)
	r.floatIn("smoothing", 0, 1, true, false, &c.Smoothing)
	return c
}

func (r *reader) prioritizer() adaptive.PrioritizerConfig {
	var c adaptive.PrioritizerConfig
	if f, v := r.float("queueStart"); v != nil {
		switch {
		case f == 0:
			r.failf(v, "must be more than 0: adaptive.Prioritizer reads 0 as its default 1; write a small value such as 0.01")
		case f < 0 || f > 1e6:
			r.failf(v, "must be in (0, 1e6], got %s", strings.TrimSpace(v.scalar))
		default:
			c.QueueStart = f
		}
	}
	r.floatIn("queueFull", 0, 1e6, true, false, &c.QueueFull)
	r.positive("calibrationInterval", time.Nanosecond, &c.CalibrationInterval)
	return c
}

func (r *reader) throttle() throttle.Config {
	var c throttle.Config
	r.floatIn("k", 1, 1e6, false, false, &c.K)
	r.positive("window", time.Nanosecond, &c.Window)
	if n, v := r.intIn("windowBuckets", 1, throttle.MaxWindowBuckets); v != nil {
		c.WindowBuckets = n
	}
	var rejections []error
	c.RecordErrors, rejections = r.exceptions("recordExceptions")
	if v := r.p["recordExceptions"]; v != nil && len(rejections) > 0 {
		r.failf(v, "lists a levee rejection (%v): a rejection by an inner pattern never reached the backend, and a "+
			"throttler never counts it", rejections[0])
	}
	return c
}

// checkOverload checks what the sections of levee refer to: an adaptive instance's
// prioritizer names an instance of levee.prioritizer.
func checkOverload(ps *parser, c *Config) {
	for _, name := range c.Names(Adaptive) {
		v := c.settings[Adaptive][name]["prioritizer"]
		if v == nil {
			continue
		}
		if _, ok := c.Prioritizers.Instances[strings.TrimSpace(v.scalar)]; !ok {
			have := "there are none"
			if names := c.Names(Prioritizer); len(names) > 0 {
				have = "have: " + strings.Join(names, ", ")
			}
			ps.fail(v.src, v.path, "%q names no instance of levee.prioritizer (%s)", strings.TrimSpace(v.scalar), have)
		}
	}
}

// Overload holds the instances of levee's own sections, which a registry.Registry does not
// hold: the adaptive limiters (levee.adaptive), the prioritizers (levee.prioritizer), each
// with the limiters whose prioritizer key names it registered, and the client-side
// throttlers (levee.throttle), each by its instance name. Use them in a pipeline with
// levee.Pipeline's WithConcurrencyLimiter (a limiter, or a prioritizer's
// Prioritizer.Limiter(l)) and WithAdmission (a throttler), or with their packages' Execute
// and Decorator.
type Overload struct {
	Limiters     map[string]*adaptive.Limiter
	Prioritizers map[string]*adaptive.Prioritizer
	Throttlers   map[string]*throttle.Throttler
}

// NewOverload builds every instance of levee's sections: levee.adaptive.instances.NAME with
// adaptive.New, levee.prioritizer.instances.NAME with adaptive.NewPrioritizer and
// levee.throttle.instances.NAME with throttle.New, each from its config resolved as
// Resilience4j's sections are (its own keys over its baseConfig's or configs.default's);
// an adaptive instance with a prioritizer key is registered with that prioritizer
// (Prioritizer.Register). Every value was checked at load, so an error is unexpected; it
// names the instance. The instances start no goroutine and need no closing.
func (c *Config) NewOverload() (*Overload, error) {
	if c == nil || c.settings == nil {
		return nil, errors.New("leveeconfig: NewOverload needs a Config made by Load or Parse")
	}
	o := &Overload{Limiters: map[string]*adaptive.Limiter{}, Prioritizers: map[string]*adaptive.Prioritizer{},
		Throttlers: map[string]*throttle.Throttler{}}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(c.Prioritizers.Instances)) {
		p, err := adaptive.NewPrioritizer(name, c.Prioritizers.Instances[name])
		if err != nil {
			errs = append(errs, fmt.Errorf("leveeconfig: prioritizer %q: %w", name, err))
			continue
		}
		o.Prioritizers[name] = p
	}
	for _, name := range slices.Sorted(maps.Keys(c.Adaptive.Instances)) {
		l, err := adaptive.New(name, c.Adaptive.Instances[name])
		if err != nil {
			errs = append(errs, fmt.Errorf("leveeconfig: adaptive %q: %w", name, err))
			continue
		}
		o.Limiters[name] = l
		if v := c.settings[Adaptive][name]["prioritizer"]; v != nil {
			if p := o.Prioritizers[strings.TrimSpace(v.scalar)]; p != nil {
				p.Register(l)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Throttlers.Instances)) {
		t, err := throttle.New(name, c.Throttlers.Instances[name])
		if err != nil {
			errs = append(errs, fmt.Errorf("leveeconfig: throttle %q: %w", name, err))
			continue
		}
		o.Throttlers[name] = t
	}
	return o, errors.Join(errs...)
}

// PrioritizerOf returns the prioritizer an adaptive instance's prioritizer key names, built
// by NewOverload, or nil when it names none.
func (c *Config) PrioritizerOf(o *Overload, name string) *adaptive.Prioritizer {
	if c == nil || o == nil {
		return nil
	}
	if v := c.settings[Adaptive][name]["prioritizer"]; v != nil {
		return o.Prioritizers[strings.TrimSpace(v.scalar)]
	}
	return nil
}

// A limiter is an admitter of a pipeline.
var _ levee.Admitter = (*adaptive.Limiter)(nil)
