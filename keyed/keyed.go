package keyed

import (
	"fmt"
	"iter"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/levee-go/levee/internal/event"
	"github.com/levee-go/levee/internal/safe"
)

// Default values.
const (
	// DefaultMaxKeys is the number of keys kept when Config.MaxKeys is 0.
	DefaultMaxKeys = 10_000
	// DefaultIdleTimeout is how long an unused key is kept when Config.IdleTimeout is 0.
	DefaultIdleTimeout = 10 * time.Minute
	// MaxKeysLimit is the largest MaxKeys New accepts.
	MaxKeysLimit = 1 << 30
)

// NoIdleTimeout is the IdleTimeout that keeps unused keys until MaxKeys pushes them out. It
// exists because the zero value of the field means DefaultIdleTimeout.
//
// Its value is the smallest time.Duration (math.MinInt64 nanoseconds), which no typo or guess
// such as −1 reaches: every other negative IdleTimeout is refused. Always write the constant.
const NoIdleTimeout time.Duration = math.MinInt64

// Config configures a Keyed. The zero value of each field means its default.
type Config struct {
	// MaxKeys is the most keys held at once, in [1, MaxKeysLimit]. Getting one more key
	// evicts the least recently used one. Default 10 000.
	MaxKeys int
	// IdleTimeout is how long a key may go without a Get before it is evicted, > 0, or
	// NoIdleTimeout. Default 10 minutes.
	IdleTimeout time.Duration
}

// DefaultConfig returns the configuration with every default filled in: 10 000 keys, evicted
// after 10 minutes unused.
func DefaultConfig() Config { return Config{}.withDefaults() }

func (c Config) withDefaults() Config {
	if c.MaxKeys == 0 {
		c.MaxKeys = DefaultMaxKeys
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	return c
}

func (c Config) validate() error {
	if c.MaxKeys < 1 || c.MaxKeys > MaxKeysLimit {
		return fmt.Errorf("keyed: MaxKeys must be in [1, %d], got %d", MaxKeysLimit, c.MaxKeys)
	}
	if c.IdleTimeout < 0 && c.IdleTimeout != NoIdleTimeout {
		return fmt.Errorf("keyed: IdleTimeout must be > 0 or NoIdleTimeout, got %v", c.IdleTimeout)
	}
	return nil
}

// Keyed holds one instance of V per key K — a circuit breaker per host, a limiter per tenant —
// created on first use and evicted when memory would otherwise grow without bound: beyond
// MaxKeys the least recently used key goes, and a key unused for IdleTimeout goes at the next
// access of the Keyed (Get, Remove, Metrics, All, CountBy). No goroutine of its own runs, so
// there is nothing to close; a Keyed nobody touches keeps its idle keys until EvictIdle or the
// next access. It is safe for concurrent use. Create it with New; the zero value is not usable.
type Keyed[K comparable, V any] struct {
	cfg       Config
	create    func(K) (V, error)
	evictions event.Publisher[Eviction[K, V]]

	mu      sync.Mutex // guards everything below; never held across create or an eviction consumer
	entries map[K]*entry[K, V]
	// head is the most recently used entry, tail the least: the idle keys are a suffix of the
	// list, so that evicting them costs nothing when there are none.
	head, tail *entry[K, V]
	m          Metrics
}

type entry[K comparable, V any] struct {
	key        K
	v          V
	err        error
	last       time.Time     // the last Get
	ready      chan struct{} // closed when create returned; nil for an entry that is ready
	prev, next *entry[K, V]
}

// New returns a Keyed that creates the instance of a key with create on the key's first Get.
// It refuses a field of cfg out of range, and a nil create, with an error naming it:
//
//	keyed: MaxKeys must be in [1, 1073741824], got -1
func New[K comparable, V any](cfg Config, create func(K) (V, error)) (*Keyed[K, V], error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if create == nil {
		return nil, fmt.Errorf("keyed: create must be a non-nil function, got nil")
	}
	return &Keyed[K, V]{cfg: cfg, create: create, entries: make(map[K]*entry[K, V])}, nil
}

// Config returns the configuration given to New with its defaults filled in.
func (k *Keyed[K, V]) Config() Config { return k.cfg }

// Get returns the instance of key, creating it with New's create function if key has none:
// get-or-create, with create run once per key however many goroutines ask at the same time
// (the others wait for it, and receive its error if it fails). A failed create is not kept: the
// next Get tries again. A panic in create comes back as a *levee.PanicError. Get makes key the
// most recently used; it evicts idle keys first and, after a creation, the least recently used
// key beyond MaxKeys. A key protecting its dependency (see Protecting: an OPEN or HALF_OPEN
// breaker, a limiter with waiters) is never evicted; when MaxKeys keys are held and all are
// protected, a new key is refused with an *AllKeysProtectedError (matching
// ErrAllKeysProtected, a levee rejection) rather than sharing another key's instance, whose
// state would then mix two dependencies. Getting a key that exists allocates nothing.
func (k *Keyed[K, V]) Get(key K) (V, error) {
	now := time.Now()
	var buf [4]Eviction[K, V]
	k.mu.Lock()
	ev := k.evictIdleLocked(now, buf[:0])
	if e, ok := k.entries[key]; ok {
		if e.ready == nil {
			k.touchLocked(e, now)
			k.m.Hits++
			k.mu.Unlock()
			k.publish(ev)
			return e.v, nil
		}
		ready := e.ready
		k.m.Hits++
		k.mu.Unlock()
		k.publish(ev)
		<-ready
		return e.v, e.err // written before ready was closed
	}
	if k.fullOfProtectedLocked() {
		k.m.RefusedProtected++
		k.mu.Unlock()
		k.publish(ev)
		var zero V
		return zero, &AllKeysProtectedError{MaxKeys: k.cfg.MaxKeys}
	}
	e := &entry[K, V]{key: key, last: now, ready: make(chan struct{})}
	k.entries[key] = e
	k.pushFrontLocked(e)
	k.m.Keys = len(k.entries)
	k.m.Misses++
	k.mu.Unlock()
	k.publish(ev)

	v, err := k.run(key)

	k.mu.Lock()
	ev = buf[:0]
	e.v, e.err = v, err
	ready := e.ready
	e.ready = nil
	if err != nil {
		k.unlinkLocked(e)
		k.m.CreateErrors++
	} else {
		k.m.Created++
		e.last = time.Now()
		ev = k.evictOverLocked(e, ev)
	}
	k.m.Keys = len(k.entries)
	close(ready)
	k.mu.Unlock()
	k.publish(ev)
	return v, err
}

// run calls create, turning a panic into a *levee.PanicError.
func (k *Keyed[K, V]) run(key K) (v V, err error) {
	defer func() {
		if r := recover(); r != nil {
			var zero V
			v, err = zero, safe.NewPanicError(r)
		}
	}()
	return k.create(key)
}

// Remove evicts key now (cause Removed) and reports whether it was there. A key whose creation
// is under way is not removed.
func (k *Keyed[K, V]) Remove(key K) bool {
	var buf [4]Eviction[K, V]
	k.mu.Lock()
	ev := k.evictIdleLocked(time.Now(), buf[:0])
	e, ok := k.entries[key]
	ok = ok && e.ready == nil
	if ok {
		ev = k.evictLocked(e, Removed, ev)
	}
	k.mu.Unlock()
	k.publish(ev)
	return ok
}

// Clear evicts every key whose creation is not under way (cause Removed), for instance at
// shutdown so that the eviction consumers release what the instances hold.
func (k *Keyed[K, V]) Clear() {
	k.mu.Lock()
	var ev []Eviction[K, V]
	for e := k.tail; e != nil; {
		prev := e.prev
		if e.ready == nil {
			ev = k.evictLocked(e, Removed, ev)
		}
		e = prev
	}
	k.mu.Unlock()
	k.publish(ev)
}

// EvictIdle evicts the keys idle for IdleTimeout or longer and returns how many it evicted.
// Every access does it already; call it from a ticker of your own when a Keyed may go
// untouched for long while its instances hold resources.
func (k *Keyed[K, V]) EvictIdle() int {
	k.mu.Lock()
	ev := k.evictIdleLocked(time.Now(), nil)
	k.mu.Unlock()
	k.publish(ev)
	return len(ev)
}

// All returns the keys and instances held when it is called, most recently used first, as an
// iterator. It evicts idle keys first and does not make any key more recently used. The
// iteration runs outside every lock: the loop body may call k.
func (k *Keyed[K, V]) All() iter.Seq2[K, V] {
	k.mu.Lock()
	ev := k.evictIdleLocked(time.Now(), nil)
	keys := make([]K, 0, len(k.entries))
	vals := make([]V, 0, len(k.entries))
	for e := k.head; e != nil; e = e.next {
		if e.ready == nil {
			keys, vals = append(keys, e.key), append(vals, e.v)
		}
	}
	k.mu.Unlock()
	k.publish(ev)
	return func(yield func(K, V) bool) {
		for i := range keys {
			if !yield(keys[i], vals[i]) {
				return
			}
		}
	}
}

// Cause is why a key was evicted.
type Cause int

// The causes.
const (
	// Capacity: one key more than MaxKeys was created and this one was the least recently used.
	Capacity Cause = iota + 1
	// Idle: the key went IdleTimeout without a Get.
	Idle
	// Removed: Remove or Clear.
	Removed
)

// String returns "CAPACITY", "IDLE" or "REMOVED".
func (c Cause) String() string {
	switch c {
	case Capacity:
		return "CAPACITY"
	case Idle:
		return "IDLE"
	case Removed:
		return "REMOVED"
	}
	return "Cause(" + strconv.Itoa(int(c)) + ")"
}

// Eviction is what Subscribe's consumers receive when a key leaves: the key, its instance and
// the cause.
type Eviction[K comparable, V any] struct {
	Key   K
	Value V
	Cause Cause
}

// Subscribe registers fn to receive every eviction from now on — to unsubscribe the evicted
// instance's own consumers, unregister it from a registry, close what it holds — and returns
// the function that unsubscribes fn. fn runs synchronously on the goroutine whose access
// evicted the key, after the key has left and outside every lock of k (it may call k), and
// must be quick.
func (k *Keyed[K, V]) Subscribe(fn func(Eviction[K, V])) (unsubscribe func()) {
	return k.evictions.Subscribe(fn)
}

func (k *Keyed[K, V]) publish(ev []Eviction[K, V]) {
	if len(ev) == 0 || !k.evictions.Active() {
		return
	}
	for _, e := range ev {
		k.evictions.Publish(e)
	}
}
