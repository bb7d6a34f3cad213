package leveeconfig

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/throttle"
)

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
			c.QueueStart = adaptive.NoQueueStart // shedding from the first queued caller on
		case f < 0 || f > 1e6:
			r.failf(v, "must be in [0, 1e6], got %s", strings.TrimSpace(v.scalar))
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

// partitioned reads the partition keys of an adaptive instance: partitions (a
// PartitionedLimiter) or maxKeys (a keyed one), rejectionDelay (the keyed limiter's, and the
// default of every partition without its own) and maxDelayedCalls. It returns the configs
// with cfg as their limit's; both nil for an instance with neither key.
func (r *reader) partitioned(cfg adaptive.Config) (*adaptive.PartitionedConfig, *adaptive.KeyedConfig) {
	pv, kv := r.p["partitions"], r.p["maxKeys"]
	var delay time.Duration
	dv := r.p["rejectionDelay"]
	if d, v := r.dur("rejectionDelay"); v != nil {
		delay = d
	}
	delayed, mv := r.int("maxDelayedCalls", 0)
	if pv == nil && kv == nil {
		for _, v := range []*value{dv, mv} {
			if v != nil {
				r.ps.mistake(v.src, v.path, "ignored without partitions or maxKeys: it applies to a partitioned limiter")
			}
		}
		return nil, nil
	}
	if q := r.p["maxQueued"]; q != nil && cfg.MaxQueued != 0 {
		at := pv
		if at == nil {
			at = kv
		}
		r.failf(q, "must be 0 with %s (%s): a partitioned limiter queues nobody", at.spec.name, at.src)
		return nil, nil
	}
	if pv != nil && kv != nil {
		r.failf(kv, "conflicts with partitions (%s): a limiter is partitioned by names or by keys, not both", pv.src)
		return nil, nil
	}
	if kv != nil {
		n, v := r.intIn("maxKeys", 1, 1<<20)
		if v == nil {
			return nil, nil
		}
		return nil, &adaptive.KeyedConfig{Config: cfg, MaxKeys: n, RejectionDelay: delay, MaxDelayedCalls: delayed}
	}
	out := &adaptive.PartitionedConfig{Config: cfg, MaxDelayedCalls: delayed}
	sum, bad := 0.0, false
	var shares []string
	for _, part := range r.ps.pairs(pv.node, pv.path) {
		name, at := part[0].Value, join(pv.path, part[0].Value)
		p := adaptive.Partition{Name: name, RejectionDelay: delay}
		sub := props{}
		for _, kv := range r.ps.pairs(part[1], at) {
			k, n := kv[0], kv[1]
			key := ""
			switch norm(k.Value) {
			case "share":
				key = "share"
			case "rejectiondelay":
				key = "rejectionDelay"
			default:
				r.ps.fail(Source{File: pv.src.File, Line: k.Line, Env: pv.src.Env}, join(at, k.Value),
					"unknown key of a partition: it takes share and rejectionDelay%s", didYouMean(k.Value, []string{"share", "rejectionDelay"}))
				bad = true
				continue
			}
			sub[key] = &value{path: join(at, k.Value), spec: keySpec{name: key}, scalar: n.Value,
				src: Source{File: pv.src.File, Line: k.Line, Env: pv.src.Env}}
		}
		pr := &reader{ps: r.ps, p: sub}
		if sub["share"] == nil {
			r.ps.fail(Source{File: pv.src.File, Line: part[0].Line, Env: pv.src.Env}, at, "no share: a partition needs its share of the limit, in (0, 1]")
			bad = true
			continue
		}
		before := len(r.ps.errs)
		pr.floatIn("share", 0, 1, true, false, &p.Share)
		if d, v := pr.dur("rejectionDelay"); v != nil {
			p.RejectionDelay = d
		}
		if len(r.ps.errs) > before {
			bad = true
			continue
		}
		sum += p.Share
		shares = append(shares, name+" "+num(p.Share))
		out.Partitions = append(out.Partitions, p)
	}
	if len(out.Partitions) == 0 && !bad {
		r.failf(pv, "lists no partition: give each its share, as partitions: {live: {share: 0.9}, batch: {share: 0.1}}")
		return nil, nil
	}
	if !bad && sum > 1+1e-9 {
		r.failf(pv, "the shares sum to %s (%s): they must sum to at most 1", num(math.Round(sum*1e9)/1e9), strings.Join(shares, ", "))
		return nil, nil
	}
	if bad {
		return nil, nil
	}
	return out, nil
}

// checkOverload checks what the sections of levee refer to: an adaptive instance's
// prioritizer names an instance of levee.prioritizer, and the instance is not partitioned.
// It reads the partitioned instances' keys into c.
func checkOverload(ps *parser, c *Config, opts Options) {
	c.AdaptivePartitioned = map[string]adaptive.PartitionedConfig{}
	c.AdaptiveKeyed = map[string]adaptive.KeyedConfig{}
	for _, name := range c.Names(Adaptive) {
		pr := c.settings[Adaptive][name]
		before := len(ps.errs)
		r := &reader{ps: ps, p: pr, errors: opts.Errors}
		pc, kc := r.partitioned(c.Adaptive.Instances[name])
		switch {
		case pc != nil:
			if _, err := adaptive.NewPartitioned(name, *pc); err != nil && len(ps.errs) == before {
				ps.failNew(pr["partitions"].src, pr["partitions"].path, Adaptive, pr, err)
			}
			c.AdaptivePartitioned[name] = *pc
		case kc != nil:
			if _, err := adaptive.NewKeyed(name, *kc); err != nil && len(ps.errs) == before {
				ps.failNew(pr["maxKeys"].src, pr["maxKeys"].path, Adaptive, pr, err)
			}
			c.AdaptiveKeyed[name] = *kc
		}
		v := pr["prioritizer"]
		if v == nil {
			continue
		}
		if pc != nil || kc != nil {
			ps.fail(v.src, v.path, "a prioritizer serves an unpartitioned limiter: remove partitions or maxKeys, or the prioritizer")
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
	// Limiters are the adaptive instances without partitions or maxKeys.
	Limiters map[string]*adaptive.Limiter
	// Partitioned are the adaptive instances with partitions (adaptive.NewPartitioned) or
	// maxKeys (adaptive.NewKeyed).
	Partitioned  map[string]*adaptive.PartitionedLimiter
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
	o := &Overload{Limiters: map[string]*adaptive.Limiter{}, Partitioned: map[string]*adaptive.PartitionedLimiter{},
		Prioritizers: map[string]*adaptive.Prioritizer{}, Throttlers: map[string]*throttle.Throttler{}}
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
		var pl *adaptive.PartitionedLimiter
		var err error
		if pc, ok := c.AdaptivePartitioned[name]; ok {
			pl, err = adaptive.NewPartitioned(name, pc)
		} else if kc, ok := c.AdaptiveKeyed[name]; ok {
			pl, err = adaptive.NewKeyed(name, kc)
		}
		if pl != nil || err != nil {
			if err != nil {
				errs = append(errs, fmt.Errorf("leveeconfig: adaptive %q: %w", name, err))
			} else {
				o.Partitioned[name] = pl
			}
			continue
		}
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
