package registry

import (
	"errors"
	"fmt"
	"maps"
)

// DefaultConfigName is the name of each pattern's default shared config: the config of an
// instance made by name that has no InstanceConfig, and the base of one whose BaseConfig is
// empty, as Resilience4j's "default" config of a registry (configs.default in Spring).
const DefaultConfigName = "default"

// ErrConfigNotFound is returned by the get-or-create methods when an instance's BaseConfig
// names no shared config of its pattern, as Resilience4j's ConfigurationNotFoundException.
var ErrConfigNotFound = errors.New("registry: no shared config with that name")

// InstanceConfig says how the config of the instance of one name is made when a get-or-create
// method (CircuitBreaker, Retry, ...) creates it: a copy of the shared config BaseConfig,
// changed by Tune, as an instance of Resilience4j's Spring configuration inheriting with
// baseConfig. C is the pattern's config type (circuitbreaker.Config, retry.Config, ...).
type InstanceConfig[C any] struct {
	// BaseConfig names the shared config the instance starts from; "" means
	// DefaultConfigName, and when no default config is set either, the pattern's zero Config
	// (Resilience4j's defaults). A name with no shared config is ErrConfigNotFound.
	BaseConfig string
	// Tune, when set, changes the copy of the base config: the instance's own settings. It
	// is called while the instance is created, with the registry's lock held: it must not
	// call the registry. A panic in Tune is returned as an error; nothing is created.
	Tune func(cfg *C)
	// Tags are set on the instance when it is created, as SetTags.
	Tags map[string]string
}

// configs is one pattern's shared configs and instance configs.
type configs[C any] struct {
	shared    map[string]C
	instances map[string]InstanceConfig[C]
}

func newConfigs[C any]() configs[C] {
	return configs[C]{shared: map[string]C{}, instances: map[string]InstanceConfig[C]{}}
}

// resolve returns the config of the instance named name and the tags to give it; r.mu is held.
func (c *configs[C]) resolve(p Pattern, name string) (cfg C, tags map[string]string, err error) {
	ic, ok := c.instances[name]
	base := DefaultConfigName
	if ok && ic.BaseConfig != "" {
		base = ic.BaseConfig
	}
	if shared, found := c.shared[base]; found {
		cfg = shared
	} else if base != DefaultConfigName {
		return cfg, nil, fmt.Errorf("%w: %s %q (base of %q)", ErrConfigNotFound, p, base, name)
	}
	if ok && ic.Tune != nil {
		if v := callTune(ic.Tune, &cfg); v != nil {
			return cfg, nil, fmt.Errorf("registry: Tune of %s %q panicked: %v", p, name, v)
		}
	}
	return cfg, maps.Clone(ic.Tags), nil
}

// callTune calls tune on cfg and returns what it panicked with, nil when it returned.
func callTune[C any](tune func(*C), cfg *C) (panicked any) {
	defer func() { panicked = recover() }()
	tune(cfg)
	return nil
}

// getOrCreate returns the instance named name, creating it from its config with mk when
// there is none: concurrent callers of one name get one instance, as Resilience4j's
// Registry.computeIfAbsent.
func getOrCreate[T instance, C any](r *Registry, s *set[T], cs *configs[C], p Pattern, name string,
	mk func(string, C) (T, error)) (T, error) {
	if v, ok := find(r, s, name); ok {
		return v, nil
	}
	r.subMu.Lock()
	defer r.subMu.Unlock()
	r.mu.Lock()
	if v, ok := s.m[name]; ok {
		r.mu.Unlock()
		return v, nil
	}
	var zero T
	cfg, tags, err := cs.resolve(p, name)
	if err != nil {
		r.mu.Unlock()
		return zero, err
	}
	v, err := mk(name, cfg)
	if err != nil {
		r.mu.Unlock()
		return zero, fmt.Errorf("registry: creating %s %q: %w", p, name, err)
	}
	s.put(name, v)
	if len(tags) > 0 {
		r.setTagsLocked(key{p, name}, tags)
	}
	r.mu.Unlock()
	r.publishLocked(Event{Type: EntryAdded, Pattern: p, Name: name, Instance: v})
	return v, nil
}

func setShared[C any](r *Registry, cs *configs[C], name string, cfg C) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if cs.shared == nil {
		cs.shared = map[string]C{}
	}
	cs.shared[name] = cfg
}

func sharedConfig[C any](r *Registry, cs *configs[C], name string) (C, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	cfg, ok := cs.shared[name]
	return cfg, ok
}

func configure[C any](r *Registry, cs *configs[C], name string, ic InstanceConfig[C]) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ic.Tags = maps.Clone(ic.Tags)
	if cs.instances == nil {
		cs.instances = map[string]InstanceConfig[C]{}
	}
	cs.instances[name] = ic
}

func resolved[C any](r *Registry, cs *configs[C], p Pattern, name string) (C, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	cfg, _, err := cs.resolve(p, name)
	return cfg, err
}
