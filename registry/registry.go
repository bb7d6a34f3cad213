// Package registry keeps the named instances of levee's patterns in one place, so that a
// service looks them up by name and an observer (the status API of leveestatus, the
// Prometheus and OpenTelemetry collectors) lists them all.
//
// One Registry holds every pattern, each under its own namespace: a circuit breaker and a
// retry may share the name "payment". It is Resilience4j's CircuitBreakerRegistry,
// RetryRegistry, BulkheadRegistry, ThreadPoolBulkheadRegistry, RateLimiterRegistry and
// TimeLimiterRegistry behind one type, with the same entry events (added, removed,
// replaced). Every method is safe for concurrent use.
//
// It also holds the patterns Resilience4j has none of, with the same Add, Replace, Remove,
// Find and list methods: adaptive limiters (AddAdaptiveLimiter), partitioned and per-key
// adaptive limiters (AddPartitionedLimiter), prioritizers (AddPrioritizer), client-side
// throttlers (AddThrottler), keyed families (AddKeyed, a keyed.Keyed under a name through
// NewKeyedFamily), and the patterns that share their state through a store, which live in
// modules of their own and implement the interfaces StoreLimiter (AddSharedRateLimiter) and
// StoreBreaker (AddSharedCircuitBreaker). These have no configs nor get-or-create methods.
//
//	reg := registry.New()
//	cb, _ := circuitbreaker.New("payment", circuitbreaker.Config{})
//	_ = reg.AddCircuitBreaker(cb)
//	found, ok := reg.FindCircuitBreaker("payment") // cb, true
//
// An instance's tags (string pairs, as Resilience4j's tags) travel with it to the observers,
// which turn them into metric labels; set them with SetTags.
//
// Instances can also be made by name, as Resilience4j's registry.circuitBreaker(name): each
// pattern has shared configs (DefaultConfigName for the default, other names as bases) and
// per-name InstanceConfigs inheriting from a base, and the get-or-create methods
// (CircuitBreaker, Retry, Bulkhead, WorkerPool, RateLimiter, TimeLimiter) create an absent
// instance from them, exactly once however many goroutines ask:
//
//	reg.SetCircuitBreakerConfig(registry.DefaultConfigName, circuitbreaker.Config{SlidingWindowSize: 10})
//	reg.ConfigureCircuitBreaker("payment", registry.InstanceConfig[circuitbreaker.Config]{
//		Tune: func(c *circuitbreaker.Config) { c.MinimumNumberOfCalls = 5 },
//	})
//	cb, err := reg.CircuitBreaker("payment") // window 10, minimum 5
package registry

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/throttle"
	"github.com/levee-go/levee/timelimiter"
)

// Pattern names the kind of an instance: the namespace its name lives in.
type Pattern string

// The patterns a Registry holds. The values are the package names, used in errors, events
// and logs.
const (
	CircuitBreaker Pattern = "circuitbreaker"
	Retry          Pattern = "retry"
	Bulkhead       Pattern = "bulkhead"
	WorkerPool     Pattern = "workerpool" // async.WorkerPool: Resilience4j's thread-pool bulkhead
	RateLimiter    Pattern = "ratelimiter"
	TimeLimiter    Pattern = "timelimiter"

	// The patterns Resilience4j has no registry for. Their instances are only held and
	// listed (no configs, no get-or-create); the observers show them under levee's own names.
	AdaptiveLimiter      Pattern = "adaptive"             // *adaptive.Limiter
	PartitionedLimiter   Pattern = "partitioned"          // *adaptive.PartitionedLimiter (NewPartitioned, NewKeyed)
	Prioritizer          Pattern = "prioritizer"          // *adaptive.Prioritizer
	Throttler            Pattern = "throttle"             // *throttle.Throttler
	Keyed                Pattern = "keyed"                // *KeyedFamily: a keyed.Keyed under a name
	SharedRateLimiter    Pattern = "sharedratelimiter"    // a StoreLimiter, e.g. *leveeredis.RateLimiter
	SharedCircuitBreaker Pattern = "sharedcircuitbreaker" // a StoreBreaker, e.g. *leveeredis.SharedBreaker
)

// ErrDuplicate is returned by the Add methods when the name is already taken, in that
// pattern's namespace, by another instance.
var ErrDuplicate = errors.New("registry: name already registered")

// ErrNotFound is returned by SetTags when no instance of that pattern has the name.
var ErrNotFound = errors.New("registry: no instance with that name")

// errNil is returned by the Add methods for a nil instance.
var errNil = errors.New("registry: nil instance")

// EventType is the kind of a registry Event, as Resilience4j's RegistryEvent.Type.
type EventType int

// The registry events.
const (
	EntryAdded    EventType = iota // an instance was added
	EntryRemoved                   // an instance was removed
	EntryReplaced                  // an instance took the place of another of the same name
)

// String returns Resilience4j's name of the event type: ADDED, REMOVED or REPLACED.
func (t EventType) String() string {
	switch t {
	case EntryAdded:
		return "ADDED"
	case EntryRemoved:
		return "REMOVED"
	case EntryReplaced:
		return "REPLACED"
	}
	return fmt.Sprintf("EventType(%d)", int(t))
}

// Event tells a subscriber that the set of instances changed.
type Event struct {
	Type    EventType
	Pattern Pattern
	Name    string
	// Instance is the instance added, removed, or the new one of a replacement: a
	// *circuitbreaker.CircuitBreaker, *retry.Retry, *bulkhead.Bulkhead, *async.WorkerPool,
	// *ratelimiter.RateLimiter, *timelimiter.TimeLimiter, *adaptive.Limiter,
	// *adaptive.PartitionedLimiter, *adaptive.Prioritizer, *throttle.Throttler, *KeyedFamily,
	// StoreLimiter or StoreBreaker, as Pattern says.
	Instance any
	// Replaced is the instance replaced by an EntryReplaced event, else nil.
	Replaced any
}

// instance is what a registry holds: a pointer to a named pattern.
type instance interface {
	comparable
	Name() string
}

// set is one pattern's namespace.
type set[T instance] struct{ m map[string]T }

func (s *set[T]) find(name string) (T, bool) {
	v, ok := s.m[name]
	return v, ok
}

// put stores v under name, making the map on first use (the zero Registry has none).
func (s *set[T]) put(name string, v T) {
	if s.m == nil {
		s.m = map[string]T{}
	}
	s.m[name] = v
}

func (s *set[T]) sorted() []T {
	keys := slices.Sorted(maps.Keys(s.m))
	out := make([]T, len(keys))
	for i, k := range keys {
		out[i] = s.m[k]
	}
	return out
}

// Registry holds named instances of every pattern. The zero value is an empty Registry, ready
// to use, as New's is; a Registry must not be copied after first use.
type Registry struct {
	mu   sync.RWMutex
	cbs  set[*circuitbreaker.CircuitBreaker]
	rts  set[*retry.Retry]
	bhs  set[*bulkhead.Bulkhead]
	wps  set[*async.WorkerPool]
	rls  set[*ratelimiter.RateLimiter]
	tls  set[*timelimiter.TimeLimiter]
	als  set[*adaptive.Limiter]
	pls  set[*adaptive.PartitionedLimiter]
	prs  set[*adaptive.Prioritizer]
	ths  set[*throttle.Throttler]
	kfs  set[*KeyedFamily]
	srls set[StoreLimiter]
	scbs set[StoreBreaker]
	tags map[key]map[string]string

	cbc configs[circuitbreaker.Config]
	rtc configs[retry.Config]
	bhc configs[bulkhead.Config]
	wpc configs[async.WorkerPoolConfig]
	rlc configs[ratelimiter.Config]
	tlc configs[timelimiter.Config]

	subMu  sync.Mutex // serializes the delivery of events, in the order of the changes
	listMu sync.Mutex // guards subs and nextID; never held while a subscriber runs
	subs   map[int]func(Event)
	nextID int
}

// setTagsLocked stores the tags of k, making the map on first use.
func (r *Registry) setTagsLocked(k key, tags map[string]string) {
	if r.tags == nil {
		r.tags = map[key]map[string]string{}
	}
	r.tags[k] = tags
}

type key struct {
	p    Pattern
	name string
}

// New returns an empty Registry.
func New() *Registry {
	return &Registry{
		cbs:  set[*circuitbreaker.CircuitBreaker]{m: map[string]*circuitbreaker.CircuitBreaker{}},
		rts:  set[*retry.Retry]{m: map[string]*retry.Retry{}},
		bhs:  set[*bulkhead.Bulkhead]{m: map[string]*bulkhead.Bulkhead{}},
		wps:  set[*async.WorkerPool]{m: map[string]*async.WorkerPool{}},
		rls:  set[*ratelimiter.RateLimiter]{m: map[string]*ratelimiter.RateLimiter{}},
		tls:  set[*timelimiter.TimeLimiter]{m: map[string]*timelimiter.TimeLimiter{}},
		als:  set[*adaptive.Limiter]{m: map[string]*adaptive.Limiter{}},
		pls:  set[*adaptive.PartitionedLimiter]{m: map[string]*adaptive.PartitionedLimiter{}},
		prs:  set[*adaptive.Prioritizer]{m: map[string]*adaptive.Prioritizer{}},
		ths:  set[*throttle.Throttler]{m: map[string]*throttle.Throttler{}},
		kfs:  set[*KeyedFamily]{m: map[string]*KeyedFamily{}},
		srls: set[StoreLimiter]{m: map[string]StoreLimiter{}},
		scbs: set[StoreBreaker]{m: map[string]StoreBreaker{}},
		tags: map[key]map[string]string{},
		cbc:  newConfigs[circuitbreaker.Config](),
		rtc:  newConfigs[retry.Config](),
		bhc:  newConfigs[bulkhead.Config](),
		wpc:  newConfigs[async.WorkerPoolConfig](),
		rlc:  newConfigs[ratelimiter.Config](),
		tlc:  newConfigs[timelimiter.Config](),
		subs: map[int]func(Event){},
	}
}

// add stores v under its name unless the name is taken by another instance; adding the
// same instance twice is a no-op.
func add[T instance](r *Registry, s *set[T], p Pattern, v T, isNil bool) error {
	if isNil {
		return fmt.Errorf("%w of %s", errNil, p)
	}
	name := v.Name()
	r.subMu.Lock()
	defer r.subMu.Unlock()
	r.mu.Lock()
	old, taken := s.m[name]
	if taken {
		r.mu.Unlock()
		if old == v {
			return nil
		}
		return fmt.Errorf("%w: %s %q", ErrDuplicate, p, name)
	}
	s.put(name, v)
	r.mu.Unlock()
	r.publishLocked(Event{Type: EntryAdded, Pattern: p, Name: name, Instance: v})
	return nil
}

// replace stores v under its name, returning the instance it replaced.
func replace[T instance](r *Registry, s *set[T], p Pattern, v T, isNil bool) (T, bool, error) {
	var zero T
	if isNil {
		return zero, false, fmt.Errorf("%w of %s", errNil, p)
	}
	name := v.Name()
	r.subMu.Lock()
	defer r.subMu.Unlock()
	r.mu.Lock()
	old, taken := s.m[name]
	s.put(name, v)
	r.mu.Unlock()
	if !taken {
		r.publishLocked(Event{Type: EntryAdded, Pattern: p, Name: name, Instance: v})
		return zero, false, nil
	}
	if old != v {
		r.publishLocked(Event{Type: EntryReplaced, Pattern: p, Name: name, Instance: v, Replaced: old})
	}
	return old, true, nil
}

// remove deletes name's instance and its tags.
func remove[T instance](r *Registry, s *set[T], p Pattern, name string) (T, bool) {
	r.subMu.Lock()
	defer r.subMu.Unlock()
	r.mu.Lock()
	old, ok := s.m[name]
	if ok {
		delete(s.m, name)
		delete(r.tags, key{p, name})
	}
	r.mu.Unlock()
	if ok {
		r.publishLocked(Event{Type: EntryRemoved, Pattern: p, Name: name, Instance: old})
	}
	return old, ok
}

func find[T instance](r *Registry, s *set[T], name string) (T, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return s.find(name)
}

func list[T instance](r *Registry, s *set[T]) []T {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return s.sorted()
}

// SetTags sets the tags of the instance of pattern p named name, replacing any it had:
// string pairs that observers add to its metrics as labels, as Resilience4j's tags.
// leveeotel adds every tag as an attribute, as resilience4j-micrometer adds every tag; a
// Prometheus family needs one fixed set of label names, so leveeprom adds only the tag keys
// named by its WithTagKeys option (an instance without one of them gets it empty). A nil
// or empty map removes them. It returns ErrNotFound when no such instance is registered;
// the tags go when the instance is removed.
func (r *Registry) SetTags(p Pattern, name string, tags map[string]string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.hasLocked(p, name) {
		return fmt.Errorf("%w: %s %q", ErrNotFound, p, name)
	}
	if len(tags) == 0 {
		delete(r.tags, key{p, name})
		return nil
	}
	r.setTagsLocked(key{p, name}, maps.Clone(tags))
	return nil
}

// Tags returns a copy of the tags of the instance of pattern p named name; nil when it has
// none or is not registered.
func (r *Registry) Tags(p Pattern, name string) map[string]string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return maps.Clone(r.tags[key{p, name}])
}

func (r *Registry) hasLocked(p Pattern, name string) bool {
	var ok bool
	switch p {
	case CircuitBreaker:
		_, ok = r.cbs.m[name]
	case Retry:
		_, ok = r.rts.m[name]
	case Bulkhead:
		_, ok = r.bhs.m[name]
	case WorkerPool:
		_, ok = r.wps.m[name]
	case RateLimiter:
		_, ok = r.rls.m[name]
	case TimeLimiter:
		_, ok = r.tls.m[name]
	case AdaptiveLimiter:
		_, ok = r.als.m[name]
	case PartitionedLimiter:
		_, ok = r.pls.m[name]
	case Prioritizer:
		_, ok = r.prs.m[name]
	case Throttler:
		_, ok = r.ths.m[name]
	case Keyed:
		_, ok = r.kfs.m[name]
	case SharedRateLimiter:
		_, ok = r.srls.m[name]
	case SharedCircuitBreaker:
		_, ok = r.scbs.m[name]
	}
	return ok
}

// Subscribe calls fn for every later change of the registry's instances, in the order of
// the changes, one at a time, after the change is visible to the Find and list methods.
// fn runs outside the registry's lock of instances and may call any method but one that
// adds, replaces or removes (which would wait for fn forever); it may subscribe, and
// unsubscribe itself or another (a subscriber added during a delivery sees the next event).
// A panic in fn is recovered: the change stands and the other subscribers still see it. The
// returned func unsubscribes; it is idempotent, and an event whose delivery has begun when it
// is called may still reach fn, as with every levee event consumer.
func (r *Registry) Subscribe(fn func(Event)) (unsubscribe func()) {
	if fn == nil {
		return func() {}
	}
	r.listMu.Lock()
	id := r.nextID
	r.nextID++
	if r.subs == nil {
		r.subs = map[int]func(Event){}
	}
	r.subs[id] = fn
	r.listMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			r.listMu.Lock()
			delete(r.subs, id)
			r.listMu.Unlock()
		})
	}
}

// publishLocked delivers e to every subscriber subscribed when it starts, in subscription
// order; r.subMu is held.
func (r *Registry) publishLocked(e Event) {
	r.listMu.Lock()
	ids := slices.Sorted(maps.Keys(r.subs))
	fns := make([]func(Event), len(ids))
	for i, id := range ids {
		fns[i] = r.subs[id]
	}
	r.listMu.Unlock()
	for _, fn := range fns {
		deliver(fn, e)
	}
}

// deliver calls fn with e, recovering a panic of fn: a broken subscriber must neither break
// the change that published e nor keep the subscribers after it from seeing e.
func deliver(fn func(Event), e Event) {
	defer func() { _ = recover() }()
	fn(e)
}

// String describes the registry's contents by pattern, e.g.
// "registry{circuitbreaker: payment, stock; retry: payment}".
func (r *Registry) String() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var parts []string
	each := func(p Pattern, names []string) {
		if len(names) > 0 {
			parts = append(parts, string(p)+": "+strings.Join(names, ", "))
		}
	}
	each(CircuitBreaker, slices.Sorted(maps.Keys(r.cbs.m)))
	each(Retry, slices.Sorted(maps.Keys(r.rts.m)))
	each(Bulkhead, slices.Sorted(maps.Keys(r.bhs.m)))
	each(WorkerPool, slices.Sorted(maps.Keys(r.wps.m)))
	each(RateLimiter, slices.Sorted(maps.Keys(r.rls.m)))
	each(TimeLimiter, slices.Sorted(maps.Keys(r.tls.m)))
	each(AdaptiveLimiter, slices.Sorted(maps.Keys(r.als.m)))
	each(PartitionedLimiter, slices.Sorted(maps.Keys(r.pls.m)))
	each(Prioritizer, slices.Sorted(maps.Keys(r.prs.m)))
	each(Throttler, slices.Sorted(maps.Keys(r.ths.m)))
	each(Keyed, slices.Sorted(maps.Keys(r.kfs.m)))
	each(SharedRateLimiter, slices.Sorted(maps.Keys(r.srls.m)))
	each(SharedCircuitBreaker, slices.Sorted(maps.Keys(r.scbs.m)))
	return "registry{" + strings.Join(parts, "; ") + "}"
}
