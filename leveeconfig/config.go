package leveeconfig

import (
	"cmp"
	"errors"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveestatus"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/throttle"
	"github.com/levee-go/levee/timelimiter"
)

// Options are what a file cannot say.
type Options struct {
	// Errors maps the Java exception class names a file lists (recordExceptions,
	// ignoreExceptions, retryExceptions) to the Go errors they stand for, matched with
	// errors.Is (or levee.ErrorType[E]() markers, matched with errors.As):
	//
	//	Errors: map[string]error{"demo.r4j.GatewayException": payment.ErrGateway}
	//
	// Resilience4j's own exceptions need no entry: CallNotPermittedException,
	// BulkheadFullException, RequestNotPermitted and java.util.concurrent.TimeoutException
	// stand for levee's rejections and timelimiter.ErrTimeout; java.lang.Throwable,
	// java.lang.Exception and java.lang.RuntimeException stand for every error
	// (levee.ErrorType[error]()) but a levee rejection, which only the lists named for
	// rejections see. A name in neither is a load error; so is a nil error.
	Errors map[string]error
	// Environ is the environment whose RESILIENCE4J_* variables override the file, as
	// "NAME=value" strings; nil means os.Environ(), and an empty non-nil slice none.
	Environ []string
	// Profiles are the active Spring profiles, in order, as the command line's
	// --spring.profiles.active: they replace the file's spring.profiles.active and
	// SPRING_PROFILES_ACTIVE, and the profiles the file or the environment includes
	// (spring.profiles.include) come before them. nil means SPRING_PROFILES_ACTIVE of Environ,
	// read as Spring does (comma-separated, spaces trimmed), else the file's
	// spring.profiles.active; with none of them and nothing included, spring.profiles.default
	// or the one profile "default", as Spring. A document of the file with
	// spring.config.activate.on-profile applies when its expression accepts them, and Load
	// reads application-{profile}.yaml, .yml and .properties beside the file for each (see
	// Load and the package documentation).
	Profiles []string
}

// Section is one pattern's part of a loaded configuration, each config resolved: its own keys
// over its base's, the rest Resilience4j's defaults (zero fields of C). C is the pattern's
// config type.
type Section[C any] struct {
	// Configs are the shared configs, configs.NAME (configs.default is the default).
	Configs map[string]C
	// Instances are the instances' configs, instances.NAME.
	Instances map[string]C
	// Tags are the section's tags (resilience4j.<pattern>.tags), given to every instance it
	// declares, as Resilience4j's registry tags.
	Tags map[string]string
}

// Config is a loaded configuration: every pattern's configs and instances, the aspect order
// and the warnings. Make one with Load or Parse; it is read-only, and safe for concurrent
// use, except that Reload calls on one registry must not overlap.
type Config struct {
	// File is the name the configuration was loaded from.
	File string
	// Profiles are the active Spring profiles it was loaded for (see Options.Profiles).
	Profiles []string

	// CircuitBreakers to TimeLimiters are the sections of each pattern: resilience4j.
	// circuitbreaker, retry, bulkhead, thread-pool-bulkhead, ratelimiter and timelimiter.
	CircuitBreakers Section[circuitbreaker.Config]
	Retries         Section[retry.Config]
	Bulkheads       Section[bulkhead.Config]
	WorkerPools     Section[async.WorkerPoolConfig] // resilience4j.thread-pool-bulkhead
	RateLimiters    Section[ratelimiter.Config]
	TimeLimiters    Section[timelimiter.Config]

	// Adaptive, Prioritizers and Throttlers are levee's own sections, under levee:
	// levee.adaptive (adaptive.Limiter), levee.prioritizer (adaptive.Prioritizer) and
	// levee.throttle (throttle.Throttler), written in the style of Resilience4j's (see the
	// package documentation). A registry does not hold them: NewOverload builds them.
	Adaptive     Section[adaptive.Config]
	Prioritizers Section[adaptive.PrioritizerConfig]
	Throttlers   Section[throttle.Config]
	// AdaptivePartitioned and AdaptiveKeyed are the adaptive instances with partitions
	// (adaptive.PartitionedConfig) or maxKeys (adaptive.KeyedConfig), by name; their
	// limit's config is also in Adaptive.Instances.
	AdaptivePartitioned map[string]adaptive.PartitionedConfig
	AdaptiveKeyed       map[string]adaptive.KeyedConfig

	// Order is the pipeline's order from the aspect-order keys, outermost first: Spring's
	// default is Retry, CircuitBreaker, RateLimiter, TimeLimiter, Bulkhead.
	Order []registry.Pattern

	// Warnings are the keys accepted but not honoured and the configurations worth a
	// second look, sorted by source.
	Warnings []Warning

	settings map[registry.Pattern]map[string]props // the instances' merged keys
	status   []leveestatus.Option                  // from the instances' status keys
	reload   *sync.Mutex
}

// Load reads the configuration at path as Spring Boot reads its config data: the YAML, JSON
// or .properties file at path (JSON is read as the YAML it is; a name ending in .properties
// as a Java properties file), or, for a directory, its application.yaml, application.yml and
// application.properties (each that exists, in that order, so .properties wins: "If you have
// configuration files with both .properties and YAML format in the same location,
// .properties takes precedence", Spring Boot's reference). Then, for each active profile in
// order (see Options.Profiles), the profile-specific files beside it that exist:
// application-{profile}.yaml, .yml and .properties (and the main file's own extension, such
// as .json, first), in that order for the same precedence; then the environment's overrides.
// Each is read over the ones before, as Spring Boot's order: the main files' documents in
// order, the profile-specific files after them (the last profile's winning), the environment
// last. A missing profile-specific file is no error, as in Spring.
//
// Spring reads only the given file's own extension beside an explicit file
// (spring.config.location=file:app.yml reads app-prod.yml only); levee reads every extension
// beside it, as Spring does beside the files of a directory location, so a service whose
// profiles are in .properties files and whose main file is YAML keeps them.
func Load(path string, opts Options) (*Config, error) {
	mains, base, ext, err := mainFiles(path)
	if err != nil {
		return nil, err
	}
	return parseFiles(path, mains, func(profile string) ([]file, error) { return siblings(base, ext, profile) }, opts)
}

// file is one file to read, in order.
type file struct {
	name    string
	data    []byte
	profile bool // application-{profile}.*
}

// Parse reads data, YAML or JSON documents (or a .properties file, when name ends in
// .properties) named name (the name appears in errors), with Resilience4j's Spring Boot keys
// under resilience4j: circuitbreaker, retry, bulkhead, thread-pool-bulkhead
// (async.WorkerPool), ratelimiter and timelimiter, each with configs, instances, tags and its
// aspect-order key; and levee's own under levee (see the package documentation); other
// top-level keys are not read, but for Spring's profile keys. Then it applies the
// RESILIENCE4J_* variables of opts.Environ over the file. It reads no other file: the
// documents of data with spring.config.activate.on-profile apply as in Load.
//
// A key present means its value; a key absent takes Resilience4j's default (see the package
// documentation). Every unknown key, unknown exception class and bad value is an *Error naming
// the file (or variable), the line and the key's path; Parse returns all of them joined with
// errors.Join, and no Config.
func Parse(name string, data []byte, opts Options) (*Config, error) {
	return parseFiles(name, []file{{name: name, data: data}}, nil, opts)
}

// parseFiles reads the main files in order, works out the active profiles from them, opts
// and the environment, then reads the profile-specific files profileFiles returns for each
// active profile (none for a nil profileFiles), each over the ones before, then the
// environment.
func parseFiles(name string, mains []file, profileFiles func(string) ([]file, error), opts Options) (*Config, error) {
	environ := opts.Environ
	if environ == nil {
		environ = os.Environ()
	}
	ps := newParser(name)
	var docs []doc
	for _, f := range mains {
		docs = append(docs, ps.decode(f)...)
	}
	ps.profiles = ps.profilesOf(docs, opts, environ)
	for _, p := range ps.profiles {
		if profileFiles == nil {
			break
		}
		files, err := profileFiles(p)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			for _, d := range ps.decode(f) {
				props := springProps(d.root)
				ps.refuseLegacy(props)
				ps.refuseProfileKeys(d, props)
				docs = append(docs, d)
			}
		}
	}
	for _, d := range docs {
		ps.document(d)
	}
	ps.file, ps.profileFile = name, false
	if !ps.sawSection && len(ps.errs) == 0 {
		ps.noSection()
	}
	ps.env(environ)
	ps.finishIndexes()

	c := &Config{File: name, Profiles: slices.Clone(ps.profiles), settings: map[registry.Pattern]map[string]props{}, reload: &sync.Mutex{}}
	c.CircuitBreakers = section(ps, registry.CircuitBreaker, opts, c, (*reader).circuitBreaker)
	c.Retries = section(ps, registry.Retry, opts, c, (*reader).retry)
	c.Bulkheads = section(ps, registry.Bulkhead, opts, c, (*reader).bulkhead)
	c.WorkerPools = section(ps, registry.WorkerPool, opts, c, (*reader).workerPool)
	c.RateLimiters = section(ps, registry.RateLimiter, opts, c, (*reader).rateLimiter)
	c.TimeLimiters = section(ps, registry.TimeLimiter, opts, c, (*reader).timeLimiter)
	c.Adaptive = section(ps, Adaptive, opts, c, (*reader).adaptive)
	c.Prioritizers = section(ps, Prioritizer, opts, c, (*reader).prioritizer)
	c.Throttlers = section(ps, Throttle, opts, c, (*reader).throttle)
	checkOverload(ps, c, opts)
	c.Order = ps.order()

	if len(ps.errs) > 0 {
		return nil, errors.Join(sortErrors(ps.errs)...)
	}
	c.Warnings = sortWarnings(ps.warns)
	return c, nil
}

// section builds one pattern's Section.
func section[C any](ps *parser, p registry.Pattern, opts Options, c *Config, build func(*reader) C) Section[C] {
	sec := ps.sections[p]
	cfgs, insts := ps.resolve(sec)
	out := Section[C]{Configs: map[string]C{}, Instances: map[string]C{}, Tags: maps.Clone(sec.tags)}
	one := func(e *entry, pr props) C {
		before := len(ps.errs)
		cfg := build(&reader{ps: ps, p: pr, errors: opts.Errors})
		if len(ps.errs) == before {
			check(ps, p, e, pr, cfg)
		}
		return cfg
	}
	for _, name := range slices.Sorted(maps.Keys(cfgs)) {
		out.Configs[name] = one(sec.configs[name], cfgs[name])
	}
	for _, name := range slices.Sorted(maps.Keys(insts)) {
		out.Instances[name] = one(sec.instances[name], insts[name])
		c.status = append(c.status, statusOptions(&reader{ps: ps, p: insts[name]}, p, name)...)
		pitfalls(ps, p, sec.instances[name], insts[name])
	}
	c.settings[p] = insts
	return out
}

func sourceCmp(a, b Source) int {
	return cmp.Or(cmp.Compare(a.Env, b.Env), cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
}

// sortErrors orders errors by source and path and drops repeats (a bad value of a base
// config is met once per entry that inherits it).
func sortErrors(errs []error) []error {
	slices.SortStableFunc(errs, func(a, b error) int {
		ea, eb := a.(*Error), b.(*Error)
		return cmp.Or(sourceCmp(ea.Source, eb.Source), cmp.Compare(ea.Path, eb.Path))
	})
	return slices.CompactFunc(errs, func(a, b error) bool { return *a.(*Error) == *b.(*Error) })
}

func sortWarnings(ws []Warning) []Warning {
	slices.SortStableFunc(ws, func(a, b Warning) int {
		return cmp.Or(sourceCmp(a.Source, b.Source), cmp.Compare(a.Path, b.Path))
	})
	return slices.Compact(ws)
}

// pitfalls warns of the defaults that bite (the README's "Defaults that bite"), met by an
// instance that sets one key of a pair and not the other, each at its level (see Warning):
//
//	pattern         set                          not set                    level
//	ratelimiter     limitForPeriod               limitRefreshPeriod         likely mistake (500ns cycles)
//	ratelimiter     limitForPeriod               timeoutDuration            note (a 5s wait)
//	retry           maxAttempts above 1          waitDuration               note (500ms apart)
//	circuitbreaker  slidingWindowType TIME_BASED minimumNumberOfCalls       likely mistake (100 calls)
//	circuitbreaker  slidingWindowSize below 100  minimumNumberOfCalls       note (the window's size)
//	circuitbreaker  minimumNumberOfCalls above a count-based slidingWindowSize  likely mistake (capped)
//	circuitbreaker  slowCallRateThreshold        slowCallDurationThreshold  likely mistake (60s)
//	circuitbreaker  slowCallDurationThreshold    slowCallRateThreshold      note (100%)
//	timelimiter     the instance                 timeoutDuration            note (1s)
//	bulkhead        maxConcurrentCalls           maxWaitDuration            note (no wait)
//
// The backoff keys without their switch are warned of where they are read (reader.interval).
// A breaker without waitDurationInOpenState is not warned of: its 60s is in every
// Resilience4j example and shows in Settings, and a warning on most files would hide the rest.
func pitfalls(ps *parser, p registry.Pattern, e *entry, pr props) {
	switch p {
	case registry.RateLimiter:
		if v := pr["limitForPeriod"]; v != nil {
			if pr["limitRefreshPeriod"] == nil {
				ps.mistake(v.src, v.path, "limitRefreshPeriod is not set: Resilience4j's default cycle is 500ns, so %s calls "+
					"are permitted every 500ns; set limitRefreshPeriod (e.g. 1s)", strings.TrimSpace(v.scalar))
			}
			if pr["timeoutDuration"] == nil {
				ps.warn(v.src, v.path, "timeoutDuration is not set: a call waits up to Resilience4j's default 5s for a permission")
			}
		}
	case registry.Retry:
		if v := pr["maxAttempts"]; v != nil && pr["waitDuration"] == nil {
			if n, err := parseInt(v.scalar); err == nil && n > 1 {
				ps.warn(v.src, v.path, "waitDuration is not set: attempts are Resilience4j's default 500ms apart")
			}
		}
	case registry.CircuitBreaker:
		breakerPitfalls(ps, pr)
	case registry.TimeLimiter:
		if pr["timeoutDuration"] == nil {
			ps.warn(e.src, e.path, "timeoutDuration is not set: calls time out after Resilience4j's default 1s")
		}
	case registry.Bulkhead:
		if v := pr["maxConcurrentCalls"]; v != nil && pr["maxWaitDuration"] == nil {
			ps.warn(v.src, v.path, "maxWaitDuration is not set: a call finding maxConcurrentCalls in flight is refused at once "+
				"(Resilience4j's default 0); set maxWaitDuration to let it wait")
		}
	}
}

// breakerPitfalls are pitfalls' circuit-breaker rows.
func breakerPitfalls(ps *parser, pr props) {
	timeBased := false
	if v := pr["slidingWindowType"]; v != nil && norm(v.scalar) == "timebased" {
		timeBased = true
	}
	size, sv := 100, pr["slidingWindowSize"]
	if sv != nil {
		if n, err := parseInt(sv.scalar); err == nil {
			size = n
		}
	}
	switch mv := pr["minimumNumberOfCalls"]; {
	case mv == nil && timeBased:
		v := pr["slidingWindowType"]
		ps.mistake(v.src, v.path, "minimumNumberOfCalls is not set: a TIME_BASED window needs Resilience4j's default "+
			"100 calls within it before any failure rate; set minimumNumberOfCalls")
	case mv == nil && sv != nil && size < 100:
		ps.warn(sv.src, sv.path, "minimumNumberOfCalls is not set: Resilience4j's default 100 is capped to the window, "+
			"so the failure rate needs %d calls", size)
	case mv != nil && !timeBased:
		if n, err := parseInt(mv.scalar); err == nil && n > size {
			at := "Resilience4j's default slidingWindowSize"
			if sv != nil {
				at = "slidingWindowSize (" + sv.src.String() + ")"
			}
			ps.mistake(mv.src, mv.path, "%d is more than %s %d: a COUNT_BASED window holds %d calls at most, so "+
				"Resilience4j caps minimumNumberOfCalls to %d", n, at, size, size, size)
		}
	}
	rate, dur := pr["slowCallRateThreshold"], pr["slowCallDurationThreshold"]
	switch {
	case rate != nil && dur == nil:
		ps.mistake(rate.src, rate.path, "slowCallDurationThreshold is not set: only calls slower than Resilience4j's "+
			"default 60s are slow; set slowCallDurationThreshold")
	case dur != nil && rate == nil:
		ps.warn(dur.src, dur.path, "slowCallRateThreshold is not set: Resilience4j's default 100 opens the breaker "+
			"only when every call of the window is slow")
	}
}

// statusOptions reads the keys of one instance that configure leveestatus rather than the
// instance: eventConsumerBufferSize for every pattern, registerHealthIndicator and
// allowHealthIndicatorToFail for a breaker.
func statusOptions(r *reader, p registry.Pattern, name string) []leveestatus.Option {
	var out []leveestatus.Option
	if n, v := r.int("eventConsumerBufferSize", 1); v != nil {
		if n > leveestatus.MaxEventConsumerBufferSize {
			r.failf(v, "must be at least 1 and at most %d, got %d", leveestatus.MaxEventConsumerBufferSize, n)
		} else {
			out = append(out, leveestatus.InstanceEventConsumerBufferSize(p, name, n))
		}
	}
	if p != registry.CircuitBreaker {
		return out
	}
	out = append(out, leveestatus.RegisterHealthIndicators()) // none registered by default, as Resilience4j
	if on, _ := r.bool("registerHealthIndicator"); on {
		out = append(out, leveestatus.RegisterHealthIndicators(name))
	}
	if on, _ := r.bool("allowHealthIndicatorToFail"); on {
		out = append(out, leveestatus.AllowHealthIndicatorToFail(name))
	}
	return out
}

// StatusOptions returns the leveestatus options the instances' keys ask for, to pass to
// leveestatus.NewHandler beside the application's own:
//
//   - eventConsumerBufferSize of an instance (any pattern) sizes what the handler keeps of
//     its events (leveestatus.InstanceEventConsumerBufferSize);
//   - registerHealthIndicator: true makes a breaker a component of GET /health, and, as in
//     Resilience4j, a breaker without it is none (leveestatus.RegisterHealthIndicators; a
//     configuration with breakers and no registerHealthIndicator lists none of them);
//   - allowHealthIndicatorToFail: true lets an OPEN breaker make the health DOWN
//     (leveestatus.AllowHealthIndicatorToFail).
//
// A configuration without breakers leaves the health's components to leveestatus' default
// (every breaker of the registry). The rate limiter's health keys are warned about and
// ignored: leveestatus' health lists breakers only.
func (c *Config) StatusOptions() []leveestatus.Option {
	if c == nil {
		return nil
	}
	return slices.Clone(c.status)
}

// Names returns the names of pattern p's instances (instances.NAME), sorted.
func (c *Config) Names(p registry.Pattern) []string {
	if c == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(c.settings[p]))
}

// Settings returns the effective keys of pattern p's instance named name, in Resilience4j's
// order of keys: each with its value and where it was set (the file's line, which may be a
// base config's, or the variable), or the default. Keys with no default that nothing set, and
// ignored keys, are left out. It returns nil for an instance the file does not declare.
func (c *Config) Settings(p registry.Pattern, name string) []Setting {
	if c == nil {
		return nil
	}
	pr, ok := c.settings[p][name]
	if !ok {
		return nil
	}
	var out []Setting
	for _, sp := range specs[p] {
		if sp.ignored != "" || sp.refused != "" {
			continue
		}
		if v := pr[sp.name]; v != nil {
			out = append(out, Setting{Key: sp.name, Value: v.text(), Source: v.src})
		} else if sp.def != "" {
			out = append(out, Setting{Key: sp.name, Value: sp.def})
		}
	}
	return out
}

// Apply stores c in r and creates every instance c declares, as Spring Boot does at
// start-up: each configs.NAME becomes a shared config (SetCircuitBreakerConfig, ...), each
// instances.NAME an InstanceConfig with the section's tags (ConfigureCircuitBreaker, ...),
// then the instances are made with the get-or-create methods (an instance r already holds is
// kept as it is: use Reload to change it). The caller owns the worker pools created and
// closes them. It returns the errors of the instances that could not be made, joined.
func (c *Config) Apply(r *registry.Registry) error {
	if c == nil || r == nil {
		return errors.New("leveeconfig: Apply needs a Config and a registry")
	}
	return errors.Join(
		apply(c.CircuitBreakers, r.SetCircuitBreakerConfig, r.ConfigureCircuitBreaker, r.CircuitBreaker),
		apply(c.Retries, r.SetRetryConfig, r.ConfigureRetry, r.Retry),
		apply(c.Bulkheads, r.SetBulkheadConfig, r.ConfigureBulkhead, r.Bulkhead),
		apply(c.WorkerPools, r.SetWorkerPoolConfig, r.ConfigureWorkerPool, r.WorkerPool),
		apply(c.RateLimiters, r.SetRateLimiterConfig, r.ConfigureRateLimiter, r.RateLimiter),
		apply(c.TimeLimiters, r.SetTimeLimiterConfig, r.ConfigureTimeLimiter, r.TimeLimiter),
	)
}

// configureAll stores a section's configs and instance configs, creating nothing.
func configureAll[C any](s Section[C], set func(string, C), configure func(string, registry.InstanceConfig[C])) {
	for name, cfg := range s.Configs {
		set(name, cfg)
	}
	for name, cfg := range s.Instances {
		configure(name, registry.InstanceConfig[C]{
			Tune: func(c *C) { *c = cfg }, // cfg is resolved already: base and defaults included
			Tags: s.Tags,
		})
	}
}

func apply[C any, T any](s Section[C], set func(string, C), configure func(string, registry.InstanceConfig[C]),
	get func(string) (T, error)) error {
	configureAll(s, set, configure)
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(s.Instances)) {
		if _, err := get(name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Registry returns a new registry holding c's configs and instances, as Apply.
func (c *Config) Registry() (*registry.Registry, error) {
	if c == nil {
		return nil, errors.New("leveeconfig: nil Config")
	}
	r := registry.New()
	return r, c.Apply(r)
}
