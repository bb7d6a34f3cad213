package leveeconfig

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/throttle"
	"github.com/levee-go/levee/timelimiter"
)

// anyError is the entry of Java's catch-all exception classes: every error, as
// levee.ErrorType[error]() matches any error through errors.As. The patterns never show it a
// levee rejection, which only the lists named for rejections see.
var anyError = levee.ErrorType[error]()

// builtinErrors are Resilience4j's own exceptions, Java's catch-all classes and the JDK's
// common I/O exceptions, which need no registration: each stands for the Go errors listed
// (any of them matches). Options.Errors takes precedence over this table. Each row:
//
//   - java.lang.Throwable, Exception, RuntimeException: every error (levee.ErrorType[error]()).
//   - Resilience4j's CallNotPermittedException, BulkheadFullException, RequestNotPermitted:
//     levee's rejections circuitbreaker.ErrCallNotPermitted, bulkhead.ErrBulkheadFull,
//     ratelimiter.ErrRequestNotPermitted.
//   - java.util.concurrent.TimeoutException: timelimiter.ErrTimeout, context.DeadlineExceeded
//     and os.ErrDeadlineExceeded (a deadline of a net.Conn or an os.File).
//   - java.net.SocketTimeoutException: context.DeadlineExceeded and os.ErrDeadlineExceeded,
//     which a net.Conn's timeouts match.
//   - java.net.ConnectException: syscall.ECONNREFUSED (connection refused), which a dial's
//     *net.OpError matches through errors.Is.
//   - java.net.UnknownHostException: *net.DNSError (errors.As).
//   - java.io.IOException: every net.Error (a *net.OpError, a *net.DNSError, a timeout) and
//     io.ErrUnexpectedEOF, since in Java the three above are IOExceptions too.
var builtinErrors = map[string][]error{
	"java.lang.Throwable":        {anyError},
	"java.lang.Exception":        {anyError},
	"java.lang.RuntimeException": {anyError},

	"io.github.resilience4j.circuitbreaker.CallNotPermittedException": {circuitbreaker.ErrCallNotPermitted},
	"io.github.resilience4j.bulkhead.BulkheadFullException":           {bulkhead.ErrBulkheadFull},
	"io.github.resilience4j.ratelimiter.RequestNotPermitted":          {ratelimiter.ErrRequestNotPermitted},

	"java.util.concurrent.TimeoutException": {timelimiter.ErrTimeout, context.DeadlineExceeded, os.ErrDeadlineExceeded},
	"java.net.SocketTimeoutException":       {context.DeadlineExceeded, os.ErrDeadlineExceeded},
	"java.net.ConnectException":             {syscall.ECONNREFUSED},
	"java.net.UnknownHostException":         {levee.ErrorType[*net.DNSError]()},
	"java.io.IOException":                   {levee.ErrorType[net.Error](), io.ErrUnexpectedEOF},
}

// resolve merges each entry with its base configs, as Spring's baseConfig: the entry's own
// keys over its base's, recursively; an instance without baseConfig inherits configs.default
// when there is one. An instance with a baseConfig whose chain does not reach configs.default
// has configs.default merged beneath the chain for every pattern but the breaker, as
// Resilience4j's registries do: its Retry, Bulkhead, ThreadPoolBulkhead, RateLimiter and
// TimeLimiter registries build a named config from the default config, while its
// CircuitBreakerConfigurationProperties builds one from the base config alone. It returns the
// merged props of every config and instance.
func (ps *parser) resolve(sec *rawSection) (cfgs, insts map[string]props) {
	cfgs, insts = map[string]props{}, map[string]props{}
	var merge func(e *entry, instance bool, visiting []string) props
	merge = func(e *entry, instance bool, visiting []string) props {
		out := props{}
		base := ""
		bv := e.props["baseConfig"]
		switch {
		case bv != nil:
			base = bv.scalar
		case instance && sec.configs[registry.DefaultConfigName] != nil:
			base = registry.DefaultConfigName
		}
		if base != "" {
			be := sec.configs[base]
			switch {
			case be == nil && bv != nil:
				have := "there are none"
				if len(sec.configs) > 0 {
					have = "have: " + strings.Join(slices.Sorted(maps.Keys(sec.configs)), ", ")
				}
				ps.fail(bv.src, bv.path, "%q names no entry of %s.configs (%s)", base, sec.prefix, have)
			case slices.Contains(visiting, base):
				ps.fail(bv.src, bv.path, "a cycle of baseConfig: %s -> %s", strings.Join(visiting, " -> "), base)
			default:
				if def := sec.configs[registry.DefaultConfigName]; instance && bv != nil && def != nil &&
					sec.spec.pattern != registry.CircuitBreaker && !reaches(sec, base, registry.DefaultConfigName) {
					maps.Copy(out, merge(def, false, []string{registry.DefaultConfigName}))
				}
				maps.Copy(out, merge(be, false, append(visiting, base)))
			}
		}
		for k, v := range e.props {
			if k != "baseConfig" {
				out[k] = v
			}
		}
		return out
	}
	for name, e := range sec.configs {
		cfgs[name] = merge(e, false, []string{name})
	}
	for name, e := range sec.instances {
		insts[name] = merge(e, true, nil)
	}
	return cfgs, insts
}

// reaches reports whether the baseConfig chain from config start reaches config target.
func reaches(sec *rawSection, start, target string) bool {
	seen := map[string]bool{}
	for n := start; n != "" && !seen[n]; {
		if n == target {
			return true
		}
		seen[n] = true
		e := sec.configs[n]
		if e == nil || e.props["baseConfig"] == nil {
			return false
		}
		n = e.props["baseConfig"].scalar
	}
	return false
}

// reader reads the merged keys of one entry into a Go config, reporting bad values.
type reader struct {
	ps     *parser
	p      props
	errors map[string]error
}

func (r *reader) failf(v *value, format string, args ...any) {
	r.ps.fail(v.src, v.path, format, args...)
}

func (r *reader) dur(key string) (time.Duration, *value) {
	v := r.p[key]
	if v == nil {
		return 0, nil
	}
	d, err := ParseDuration(v.scalar)
	if err != nil {
		r.failf(v, "%v", err)
		return 0, nil
	}
	return d, v
}

func (r *reader) int(key string, min int) (int, *value) {
	return r.intIn(key, min, math.MaxInt32)
}

// intIn reads an int in [min, max]; max is Java's int's largest unless the key has its own.
func (r *reader) intIn(key string, min, max int) (int, *value) {
	v := r.p[key]
	if v == nil {
		return 0, nil
	}
	n, err := parseInt(v.scalar)
	switch {
	case err != nil && isInteger(v.scalar):
		// Out of Java's int: say the key's own range, not int's.
		r.failf(v, "must be at least %d and at most %d, got %s", min, max, strings.TrimSpace(v.scalar))
		return 0, nil
	case err != nil:
		r.failf(v, "%q is not an integer: must be at least %d", v.scalar, min)
		return 0, nil
	case n < min:
		r.failf(v, "must be at least %d, got %d", min, n)
		return 0, nil
	case n > max:
		r.failf(v, "must be at least %d and at most %d, got %d", min, max, n)
		return 0, nil
	}
	return n, v
}

func (r *reader) float(key string) (float64, *value) {
	v := r.p[key]
	if v == nil {
		return 0, nil
	}
	f, err := parseFloat(v.scalar)
	if err != nil {
		r.failf(v, "%v", err)
		return 0, nil
	}
	return f, v
}

func (r *reader) bool(key string) (bool, *value) {
	v := r.p[key]
	if v == nil {
		return false, nil
	}
	b, err := parseBool(v.scalar)
	if err != nil {
		r.failf(v, "%v", err)
		return false, nil
	}
	return b, v
}

// percent reads a rate threshold: (0, 100], as Resilience4j. An explicit 0 is refused rather
// than read as the default.
func (r *reader) percent(key string, dst *float32) {
	f, v := r.float(key)
	if v == nil {
		return
	}
	if f <= 0 || f > 100 {
		r.failf(v, "must be in (0, 100], got %s", v.scalar)
		return
	}
	*dst = float32(f)
}

// positive reads a duration that must be more than 0 (where 0 in a Go Config would mean the
// default, an explicit 0 is refused).
func (r *reader) positive(key string, min time.Duration, dst *time.Duration) {
	d, v := r.dur(key)
	if v == nil {
		return
	}
	if d < min {
		r.failf(v, "must be at least %v, got %s", min, v.scalar)
		return
	}
	*dst = d
}

// exceptions maps a list of Java class names to Go errors: the user's table first, then
// Resilience4j's own exceptions. It returns the plain errors and the levee rejections apart.
func (r *reader) exceptions(key string) (plain, rejections []error) {
	v := r.p[key]
	if v == nil {
		return nil, nil
	}
	skip, _ := r.bool("ignoreClassBindingExceptions")
	for i, name := range v.list {
		var errs []error
		if err, ok := r.errors[name]; ok && err != nil {
			errs = []error{err}
		} else if !ok {
			errs = builtinErrors[name]
		}
		if len(errs) == 0 {
			switch {
			case skip:
				r.ps.warn(v.itemSrc(i), v.itemPath(i), "unknown exception class %q skipped, as ignoreClassBindingExceptions: true", name)
			case r.errors[name] == nil && hasKey(r.errors, name):
				r.ps.fail(v.itemSrc(i), v.itemPath(i), "exception class %q is mapped to a nil error in Options.Errors", name)
			default:
				r.ps.fail(v.itemSrc(i), v.itemPath(i), "unknown exception class %q: map it in Options.Errors to a Go "+
					"error (a sentinel, matched with errors.Is) or to levee.ErrorType[*T]() (a type, matched with errors.As), "+
					"write a built-in class (java.io.IOException, java.net.ConnectException, ...: see the package documentation), "+
					"or skip it with ignoreClassBindingExceptions: true", name)
			}
			continue
		}
		for _, err := range errs {
			if levee.IsRejection(err) {
				rejections = append(rejections, err)
			} else {
				plain = append(plain, err)
			}
		}
	}
	return plain, rejections
}

func hasKey(m map[string]error, k string) bool { _, ok := m[k]; return ok }

// interval reads the keys of Resilience4j's IntervalFunction: exponential backoff and
// randomized wait on top of initial, whose key is initialKey. ok is false when neither is
// enabled.
func (r *reader) interval(initial time.Duration, initialKey, maxKey string) (fn retry.IntervalFunction, ok bool) {
	exp, ev := r.bool("enableExponentialBackoff")
	rnd, rv := r.bool("enableRandomizedWait")
	mult, mv := r.float("exponentialBackoffMultiplier")
	factor, fv := r.float("randomizedWaitFactor")
	maxWait, xv := r.dur(maxKey)
	for _, unused := range []struct {
		v  *value
		on bool
		by string
	}{{mv, exp, "enableExponentialBackoff"}, {xv, exp, "enableExponentialBackoff"}, {fv, rnd, "enableRandomizedWait"}} {
		if unused.v != nil && !unused.on {
			r.ps.mistake(unused.v.src, unused.v.path, "ignored without %s: true, as in Resilience4j", unused.by)
		}
	}
	if !exp && !rnd {
		return nil, false
	}
	if mv == nil {
		mult = 1.5
	}
	if fv == nil {
		factor = 0.5
	}
	// The checks of Resilience4j's IntervalFunction, each at its own key, in the file's words.
	bad := false
	if exp && mv != nil && !(mult >= 1) {
		r.failf(mv, "must be at least 1 with enableExponentialBackoff: true, got %s", strings.TrimSpace(mv.scalar))
		bad = true
	}
	if rnd && fv != nil && !(factor >= 0 && factor < 1) {
		r.failf(fv, "must be in [0, 1) with enableRandomizedWait: true, got %s", strings.TrimSpace(fv.scalar))
		bad = true
	}
	if iv := r.p[initialKey]; iv != nil && initial <= 0 {
		by := "enableExponentialBackoff"
		if !exp {
			by = "enableRandomizedWait"
		}
		r.failf(iv, "must be more than 0 with %s: true, got %s", by, strings.TrimSpace(iv.scalar))
		bad = true
	}
	if exp && xv != nil && maxWait != 0 && maxWait < initial {
		r.failf(xv, "must be 0 (no cap) or at least %s (%v), got %s", initialKey, initial, strings.TrimSpace(xv.scalar))
		bad = true
	}
	if bad {
		return nil, false
	}
	var err error
	switch {
	case exp && rnd:
		fn, err = retry.ExponentialRandomBackoff(initial, mult, factor, maxWait, nil)
	case exp:
		fn, err = retry.ExponentialBackoff(initial, mult, maxWait)
	default:
		fn, err = retry.RandomizedInterval(initial, factor, nil)
	}
	if err != nil {
		at := ev
		if at == nil {
			at = rv
		}
		r.ps.failNew(at.src, at.path, registry.Retry, r.p, err)
		return nil, false
	}
	return fn, true
}

func (r *reader) circuitBreaker() circuitbreaker.Config {
	var c circuitbreaker.Config
	r.percent("failureRateThreshold", &c.FailureRateThreshold)
	r.percent("slowCallRateThreshold", &c.SlowCallRateThreshold)
	r.positive("slowCallDurationThreshold", time.Nanosecond, &c.SlowCallDurationThreshold)
	if v := r.p["slidingWindowType"]; v != nil {
		switch norm(v.scalar) {
		case "countbased":
			c.SlidingWindowType = circuitbreaker.CountBased
		case "timebased":
			c.SlidingWindowType = circuitbreaker.TimeBased
		default:
			r.failf(v, "must be COUNT_BASED or TIME_BASED, got %q", v.scalar)
		}
	}
	if n, v := r.intIn("slidingWindowSize", 1, circuitbreaker.MaxSlidingWindowSize); v != nil {
		c.SlidingWindowSize = n
	}
	if n, v := r.int("minimumNumberOfCalls", 1); v != nil {
		c.MinimumNumberOfCalls = n
	}
	if n, v := r.intIn("permittedNumberOfCallsInHalfOpenState", 1, circuitbreaker.MaxSlidingWindowSize); v != nil {
		c.PermittedNumberOfCallsInHalfOpenState = n
	}
	r.positive("waitDurationInOpenState", time.Millisecond, &c.WaitDurationInOpenState)
	if d, v := r.dur("maxWaitDurationInHalfOpenState"); v != nil {
		if d > 0 && d < time.Millisecond {
			r.failf(v, "must be 0 (wait for the probes) or at least 1ms, got %s", v.scalar)
		}
		c.MaxWaitDurationInHalfOpenState = d
	}
	if b, v := r.bool("automaticTransitionFromOpenToHalfOpenEnabled"); v != nil {
		c.AutomaticTransitionFromOpenToHalfOpenEnabled = b
	}
	initial := c.WaitDurationInOpenState
	if initial == 0 {
		initial = circuitbreaker.DefaultConfig().WaitDurationInOpenState
	}
	if fn, ok := r.interval(initial, "waitDurationInOpenState", "exponentialMaxWaitDurationInOpenState"); ok {
		c.WaitDurationInOpenState = 0
		c.WaitIntervalFunctionInOpenState = func(attempt int) time.Duration { return fn(attempt) }
	}
	c.RecordErrors, c.RecordRejections = r.exceptions("recordExceptions")
	// A rejection is never recorded unless listed; ignoring wins over recording.
	var ignoredRejections []error
	c.IgnoreErrors, ignoredRejections = r.exceptions("ignoreExceptions")
	c.RecordRejections = slices.DeleteFunc(c.RecordRejections, func(rej error) bool {
		return slices.Contains(ignoredRejections, rej)
	})
	return c
}

func (r *reader) retry() retry.Config {
	var c retry.Config
	if n, v := r.int("maxAttempts", 1); v != nil {
		c.MaxAttempts = n
	}
	wait, wv := r.dur("waitDuration")
	initial := wait
	if wv == nil {
		initial = retry.DefaultWaitDuration
	}
	if fn, ok := r.interval(initial, "waitDuration", "exponentialMaxWaitDuration"); ok {
		c.IntervalFunction = fn
	} else if wv != nil {
		c.WaitDuration = wait
		if wait == 0 {
			c.WaitDuration = retry.NoWait // waitDuration: 0 is no wait, not the default
		}
	}
	c.RetryErrors, c.RetryRejections = r.exceptions("retryExceptions")
	var ignoredRejections []error
	c.IgnoreErrors, ignoredRejections = r.exceptions("ignoreExceptions")
	// Ignoring wins over retrying, as in Resilience4j; a rejection not listed is never retried.
	c.RetryRejections = slices.DeleteFunc(c.RetryRejections, func(rej error) bool {
		return slices.Contains(ignoredRejections, rej)
	})
	if b, v := r.bool("failAfterMaxAttempts"); v != nil {
		c.FailAfterMaxAttempts = b
	}
	return c
}

func (r *reader) bulkhead() bulkhead.Config {
	var c bulkhead.Config
	if n, v := r.int("maxConcurrentCalls", 0); v != nil {
		c.MaxConcurrentCalls = n
		if n == 0 {
			c.MaxConcurrentCalls = bulkhead.NoConcurrentCalls // 0 admits no call, not the default 25
		}
	}
	if d, v := r.dur("maxWaitDuration"); v != nil {
		c.MaxWaitDuration = d
	}
	if b, v := r.bool("fairCallHandlingStrategyEnabled"); v != nil {
		c.DisableFairCallHandling = !b
	}
	return c
}

func (r *reader) workerPool() async.WorkerPoolConfig {
	var c async.WorkerPoolConfig
	if n, v := r.int("coreThreadPoolSize", 1); v != nil {
		c.CoreThreadPoolSize = n
	}
	if n, v := r.int("maxThreadPoolSize", 1); v != nil {
		c.MaxThreadPoolSize = n
	}
	if n, v := r.int("queueCapacity", 0); v != nil {
		c.QueueCapacity = n
		if n == 0 {
			c.QueueCapacity = async.NoQueue // 0 is no queue, not the default 100
		}
	}
	if d, v := r.dur("keepAliveDuration"); v != nil {
		c.KeepAliveDuration = d
		if d == 0 {
			c.KeepAliveDuration = async.NoKeepAlive // 0 ends idle extra workers at once
		}
	}
	return c
}

func (r *reader) rateLimiter() ratelimiter.Config {
	var c ratelimiter.Config
	if n, v := r.int("limitForPeriod", 1); v != nil {
		c.LimitForPeriod = n
	}
	r.positive("limitRefreshPeriod", time.Nanosecond, &c.LimitRefreshPeriod)
	if d, v := r.dur("timeoutDuration"); v != nil {
		c.TimeoutDuration = d
		if d == 0 {
			c.TimeoutDuration = ratelimiter.NoWait // 0 is no wait, not the default 5s
		}
	}
	return c
}

func (r *reader) timeLimiter() timelimiter.Config {
	var c timelimiter.Config
	r.positive("timeoutDuration", time.Nanosecond, &c.TimeoutDuration)
	if b, v := r.bool("cancelRunningFuture"); v != nil {
		c.DisableCancelRunningFuture = !b
	}
	return c
}

// check builds a throwaway instance from a config, to report what New refuses (a combination
// of fields, as coreThreadPoolSize above maxThreadPoolSize) against the entry.
func check(ps *parser, p registry.Pattern, e *entry, pr props, cfg any) {
	var err error
	switch c := cfg.(type) {
	case circuitbreaker.Config:
		_, err = circuitbreaker.New(e.name, c)
	case retry.Config:
		_, err = retry.New(e.name, c)
	case bulkhead.Config:
		_, err = bulkhead.New(e.name, c)
	case async.WorkerPoolConfig:
		var wp *async.WorkerPool
		if wp, err = async.NewWorkerPool(e.name, c); err == nil {
			_ = wp.Close()
		}
	case ratelimiter.Config:
		_, err = ratelimiter.New(e.name, c)
	case timelimiter.Config:
		_, err = timelimiter.New(e.name, c)
	case adaptive.Config:
		_, err = adaptive.New(e.name, c)
	case adaptive.PrioritizerConfig:
		_, err = adaptive.NewPrioritizer(e.name, c)
	case throttle.Config:
		_, err = throttle.New(e.name, c)
	default:
		err = fmt.Errorf("unexpected config %T of %s", cfg, p)
	}
	if err != nil {
		ps.failNew(e.src, e.path, p, pr, err)
	}
}
