package leveeconfig

import (
	"errors"
	"fmt"
	"slices"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

// Why a change is not made at run time, by pattern.
const (
	fixedPool    = "a WorkerPool's size and queue are fixed at NewWorkerPool, as Resilience4j's ThreadPoolBulkhead"
	fixedRefresh = "the cycle of a running RateLimiter cannot change, as in Resilience4j " +
		"(only limitForPeriod and timeoutDuration can)"
	gone      = "no longer in the file: the instance stays registered with its config"
	orderKept = "pipelines already built keep their order: build them again with Pipeline"
)

// Reload makes r, which c was applied to, follow next, a configuration loaded since (a file
// that does not load never gets here, so an invalid file changes nothing). What Resilience4j
// can change at run time is changed in place, for calls in flight too, without dropping a
// permit:
//
//   - a RateLimiter's limitForPeriod (from its next cycle) and timeoutDuration (for requests
//     starting from now), as Resilience4j's changeLimitForPeriod and changeTimeoutDuration;
//   - a Bulkhead's maxConcurrentCalls, maxWaitDuration and fairCallHandlingStrategyEnabled, as
//     Resilience4j's Bulkhead.changeConfig;
//   - a CircuitBreaker's whole config (thresholds, window, waits, half-open probes, exception
//     lists) from its next state transition: the period under way (its window, its probe
//     budget, its wait) keeps the config it started with (see circuitbreaker's ChangeConfig);
//   - a Retry's whole config and a TimeLimiter's timeoutDuration and cancelRunningFuture, for
//     the calls that start after Reload; a call under way keeps the config it started with.
//
// The last two are levee's additions (Resilience4j's CircuitBreaker, Retry and TimeLimiter
// have no changeConfig). An instance keeps its Logger, which a file cannot set. Every other
// difference is returned as an Unchanged saying why: a RateLimiter's limitRefreshPeriod, and
// a WorkerPool's sizes and queue, fixed at NewWorkerPool as Resilience4j's ThreadPoolBulkhead
// (resizing running workers and a queue holding submitted tasks is not offered). Instances
// next declares that r lacks are created; r's instance configs become next's (a name next no
// longer declares gets the default config) and next's shared configs are stored, so instances
// created later follow next; a shared config next drops stays in r, which has no way to remove
// one. Each instance changes atomically (ChangeConfig and the rate limiter's setters are
// atomic); two instances change one after the other. Every value was
// checked when next was loaded, so an error means an instance r holds was not made from c
// (for example, a rate limiter whose limitRefreshPeriod differs); the changes that could be
// made are made.
func (c *Config) Reload(r *registry.Registry, next *Config) ([]Unchanged, error) {
	un, _, err := c.reloadAll(r, next)
	return un, err
}

// Change is one change of a new configuration that Config.ReloadReport made: a key of an
// existing instance, or (Key "") an instance created.
type Change struct {
	// Pattern and Name name the instance.
	Pattern registry.Pattern
	Name    string
	// Key is the Spring key whose value changed, "" for an instance created.
	Key string
	// From and To are the values before and after ("" for a key that was or is unset and
	// has no default); for an instance created, From is "" and To "created".
	From, To string
	// Source is where the new value was set: the file's line or the variable (an instance
	// an environment variable alone declares is reported as the file's are).
	Source Source
}

// String returns e.g. "circuitbreaker payment slidingWindowSize 10 -> 20 (app.yml:5)".
func (ch Change) String() string {
	if ch.Key == "" {
		return fmt.Sprintf("%s %s created (%s)", ch.Pattern, ch.Name, ch.Source)
	}
	return fmt.Sprintf("%s %s %s %s -> %s (%s)", ch.Pattern, ch.Name, ch.Key, ch.From, ch.To, ch.Source)
}

// ReloadReport is what Config.ReloadReport did: the changes made and those it could not make.
type ReloadReport struct {
	Applied   []Change
	Unchanged []Unchanged
}

// ReloadReport is Reload, reporting what it applied as well as what it could not: every
// created instance and every changed key of an existing instance that Reload made, in
// pattern and key order, with where the new value comes from. A change of an instance whose
// reload failed (the returned error names it) is not in Applied.
func (c *Config) ReloadReport(r *registry.Registry, next *Config) (ReloadReport, error) {
	un, failed, err := c.reloadAll(r, next)
	rep := ReloadReport{Unchanged: un}
	if next == nil || c == nil || next.settings == nil || c.settings == nil || r == nil {
		return rep, err
	}
	kept := map[[3]string]bool{}
	for _, u := range un {
		kept[[3]string{string(u.Pattern), u.Name, u.Key}] = true
	}
	for _, s := range sections {
		p := s.pattern
		if s.root != "resilience4j" {
			continue // not in the registry: reported as Unchanged
		}
		for _, name := range next.Names(p) {
			if failed[key3(p, name)] {
				continue
			}
			if !c.declares(p, name) {
				rep.Applied = append(rep.Applied, Change{Pattern: p, Name: name, To: "created", Source: next.instanceSource(p, name)})
				continue
			}
			src := map[string]Source{}
			for _, st := range next.Settings(p, name) {
				src[st.Key] = st.Source
			}
			for _, d := range c.diff(next, p, name) {
				if !kept[[3]string{string(p), name, d.Key}] {
					rep.Applied = append(rep.Applied, Change{Pattern: p, Name: name, Key: d.Key, From: d.From, To: d.To, Source: src[d.Key]})
				}
			}
		}
	}
	return rep, err
}

func key3(p registry.Pattern, name string) string { return string(p) + "\x00" + name }

// instanceSource is where an instance was declared: its first key's source.
func (c *Config) instanceSource(p registry.Pattern, name string) Source {
	var first Source
	for _, v := range c.settings[p][name] {
		if first == (Source{}) || sourceCmp(v.src, first) < 0 {
			first = v.src
		}
	}
	return first
}

// reloadAll is Reload, also returning the instances whose reload failed.
func (c *Config) reloadAll(r *registry.Registry, next *Config) ([]Unchanged, map[string]bool, error) {
	if c == nil || next == nil || r == nil || c.settings == nil || next.settings == nil {
		return nil, nil, errors.New("leveeconfig: Reload needs a registry and two Configs made by Load or Parse")
	}
	failed := map[string]bool{}
	c.reload.Lock()
	defer c.reload.Unlock()
	var un []Unchanged
	var errs []error

	configureAll(next.CircuitBreakers, r.SetCircuitBreakerConfig, r.ConfigureCircuitBreaker)
	configureAll(next.Retries, r.SetRetryConfig, r.ConfigureRetry)
	configureAll(next.Bulkheads, r.SetBulkheadConfig, r.ConfigureBulkhead)
	configureAll(next.WorkerPools, r.SetWorkerPoolConfig, r.ConfigureWorkerPool)
	configureAll(next.RateLimiters, r.SetRateLimiterConfig, r.ConfigureRateLimiter)
	configureAll(next.TimeLimiters, r.SetTimeLimiterConfig, r.ConfigureTimeLimiter)
	forgetDropped(c.CircuitBreakers, next.CircuitBreakers, r.ConfigureCircuitBreaker)
	forgetDropped(c.Retries, next.Retries, r.ConfigureRetry)
	forgetDropped(c.Bulkheads, next.Bulkheads, r.ConfigureBulkhead)
	forgetDropped(c.WorkerPools, next.WorkerPools, r.ConfigureWorkerPool)
	forgetDropped(c.RateLimiters, next.RateLimiters, r.ConfigureRateLimiter)
	forgetDropped(c.TimeLimiters, next.TimeLimiters, r.ConfigureTimeLimiter)

	for _, s := range sections {
		p := s.pattern
		if s.root != "resilience4j" {
			un = append(un, overloadUnchanged(c, next, p)...)
			continue
		}
		for _, name := range next.Names(p) {
			diff := c.diff(next, p, name)
			if !c.declares(p, name) {
				diff = nil // new in next: created below with next's config
			}
			var err error
			switch p {
			case registry.CircuitBreaker:
				err = reloadChange(r.FindCircuitBreaker, r.CircuitBreaker, name, next.CircuitBreakers.Instances[name], diff,
					func(cb *circuitbreaker.CircuitBreaker, cfg circuitbreaker.Config) error {
						cfg.Logger = cb.Config().Logger
						return cb.ChangeConfig(cfg)
					})
			case registry.Retry:
				err = reloadChange(r.FindRetry, r.Retry, name, next.Retries.Instances[name], diff,
					func(rt *retry.Retry, cfg retry.Config) error {
						cfg.Logger = rt.Config().Logger
						return rt.ChangeConfig(cfg)
					})
			case registry.TimeLimiter:
				err = reloadChange(r.FindTimeLimiter, r.TimeLimiter, name, next.TimeLimiters.Instances[name], diff,
					func(tl *timelimiter.TimeLimiter, cfg timelimiter.Config) error {
						cfg.Logger = tl.Config().Logger
						return tl.ChangeConfig(cfg)
					})
			case registry.WorkerPool:
				_, err = reloadFixed(r.FindWorkerPool, r.WorkerPool, name, diff, fixedPool, &un)
			case registry.Bulkhead:
				err = reloadBulkhead(r, name, next.Bulkheads.Instances[name], diff)
			case registry.RateLimiter:
				err = reloadRateLimiter(r, name, next.RateLimiters.Instances[name], diff, &un)
			}
			if err != nil {
				failed[key3(p, name)] = true
				errs = append(errs, fmt.Errorf("leveeconfig: reloading %s %q: %w", p, name, err))
			}
		}
		for _, name := range c.Names(p) {
			if !next.declares(p, name) {
				un = append(un, Unchanged{Pattern: p, Name: name, Reason: gone})
			}
		}
	}
	if !slices.Equal(c.Order, next.Order) {
		un = append(un, Unchanged{From: DescribeOrder(c.Order), To: DescribeOrder(next.Order), Reason: orderKept})
	}
	return un, failed, errors.Join(errs...)
}

func (c *Config) declares(p registry.Pattern, name string) bool {
	_, ok := c.settings[p][name]
	return ok
}

// diff returns the keys whose effective values differ between c and next, as Unchanged
// values with no reason yet, in key order.
func (c *Config) diff(next *Config, p registry.Pattern, name string) []Unchanged {
	old := map[string]string{}
	for _, s := range c.Settings(p, name) {
		old[s.Key] = s.Value
	}
	now := map[string]string{}
	for _, s := range next.Settings(p, name) {
		now[s.Key] = s.Value
	}
	var out []Unchanged
	for _, sp := range specs[p] {
		o, n := old[sp.name], now[sp.name]
		if o != n {
			out = append(out, Unchanged{Pattern: p, Name: name, Key: sp.name, From: o, To: n})
		}
	}
	return out
}

// reloadFixed handles a pattern whose config cannot change: every difference is Unchanged;
// an instance r lacks is created.
func reloadFixed[T comparable](find func(string) (T, bool), get func(string) (T, error), name string,
	diff []Unchanged, reason string, un *[]Unchanged) (T, error) {
	if v, ok := find(name); ok {
		for _, d := range diff {
			d.Reason = reason
			*un = append(*un, d)
		}
		return v, nil
	}
	return get(name)
}

func reloadBulkhead(r *registry.Registry, name string, cfg bulkhead.Config, diff []Unchanged) error {
	return reloadChange(r.FindBulkhead, r.Bulkhead, name, cfg, diff, func(bh *bulkhead.Bulkhead, cfg bulkhead.Config) error {
		cfg.Logger = bh.Config().Logger
		return bh.ChangeConfig(cfg)
	})
}

// reloadChange applies cfg to the instance named name with change when its settings differ,
// or creates the instance when r lacks it.
func reloadChange[T any, C any](find func(string) (T, bool), get func(string) (T, error), name string, cfg C,
	diff []Unchanged, change func(T, C) error) error {
	v, ok := find(name)
	if !ok {
		_, err := get(name)
		return err
	}
	if len(diff) == 0 {
		return nil
	}
	return change(v, cfg)
}

func reloadRateLimiter(r *registry.Registry, name string, cfg ratelimiter.Config, diff []Unchanged, un *[]Unchanged) error {
	rl, ok := r.FindRateLimiter(name)
	if !ok {
		_, err := r.RateLimiter(name)
		return err
	}
	def := ratelimiter.DefaultConfig()
	limit, timeout := cfg.LimitForPeriod, cfg.TimeoutDuration
	if limit == 0 {
		limit = def.LimitForPeriod
	}
	if timeout == 0 {
		timeout = def.TimeoutDuration // in a Config, 0 is the default; for ChangeTimeoutDuration, no wait
	}
	var changeLimit, changeTimeout bool
	for _, d := range diff {
		switch d.Key {
		case "limitForPeriod":
			changeLimit = true
		case "timeoutDuration":
			changeTimeout = true
		default:
			d.Reason = fixedRefresh
			*un = append(*un, d)
		}
	}
	// limit × (timeout / cycle) is bounded: when the timeout shrinks, change it first, so
	// that no step passes through a larger product than both ends.
	if changeTimeout && timeout < rl.Config().TimeoutDuration {
		if err := rl.ChangeTimeoutDuration(timeout); err != nil {
			return err
		}
		changeTimeout = false
	}
	if changeLimit {
		if err := rl.ChangeLimitForPeriod(limit); err != nil {
			return err
		}
	}
	if changeTimeout {
		return rl.ChangeTimeoutDuration(timeout)
	}
	return nil
}

// ReloadFile loads path with opts, as Load, and when it loads applies it to r with Reload,
// returning the new Config (the one to reload from next time), what could not change, and
// Reload's error. When the file does not load it returns c, nil and the load error: an
// invalid file changes nothing.
func (c *Config) ReloadFile(r *registry.Registry, path string, opts Options) (*Config, []Unchanged, error) {
	next, err := Load(path, opts)
	if err != nil {
		return c, nil, err
	}
	un, err := c.Reload(r, next)
	return next, un, err
}

// forgetDropped gives each instance that old declares and next does not an empty
// InstanceConfig (the default config, no tags), so that an instance made again under its name
// follows next rather than old.
func forgetDropped[C any](old, next Section[C], configure func(string, registry.InstanceConfig[C])) {
	for name := range old.Instances {
		if _, ok := next.Instances[name]; !ok {
			configure(name, registry.InstanceConfig[C]{})
		}
	}
}

// rebuildOverload says why a change of levee's own sections is not made by Reload.
const rebuildOverload = "levee's own sections are not in the registry: build them again with NewOverload"

// overloadUnchanged reports every change of a levee section (levee.adaptive, ...) between c
// and next as Unchanged: an instance next adds (Key ""), and every key that differs.
func overloadUnchanged(c, next *Config, p registry.Pattern) []Unchanged {
	var un []Unchanged
	for _, name := range next.Names(p) {
		if !c.declares(p, name) {
			un = append(un, Unchanged{Pattern: p, Name: name, To: "created", Reason: rebuildOverload})
			continue
		}
		for _, d := range c.diff(next, p, name) {
			un = append(un, Unchanged{Pattern: p, Name: name, Key: d.Key, From: d.From, To: d.To, Reason: rebuildOverload})
		}
	}
	return un
}
