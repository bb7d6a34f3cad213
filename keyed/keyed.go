package keyed

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
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
	// evicts the least recently used one (from 32 keys on, one of the MaxKeys/16 least
	// recently used: see Keyed). Default 10 000.
	MaxKeys int
	// IdleTimeout is how long a key may go without a Get before it is evicted, > 0, or
	// NoIdleTimeout. Default 10 minutes. A key is never evicted for idleness before
	// IdleTimeout has passed since its last Get, and at most about 1 ms after (the Gets of a
	// millisecond share one clock reading; more only by the delay with which the runtime runs
	// the timer that retires it). In a testing/synctest bubble every Get reads the clock, and
	// the time of a Get is rounded up to the millisecond.
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
// access of the Keyed (Get, Remove, Metrics, All, CountBy). No goroutine of its own runs (with
// an IdleTimeout, a timer fires once, a millisecond after a Get read the clock), so there is
// nothing to close; a Keyed nobody touches keeps its idle keys until EvictIdle or the
// next access. It is safe for concurrent use. Create it with New. A nil or zero Keyed (one
// not made by New) holds nothing and never panics: Get returns ErrNilKeyed, and the other
// methods answer as for an empty Keyed.
//
// A Get of a key that is held takes no lock and allocates nothing: it reads a snapshot of the
// keys (an immutable map published through an atomic pointer), counts the hit and stamps the
// key's recency in the key's own atomics and, with an IdleTimeout, takes the time from a clock
// reading the Gets of the last millisecond share. Everything that changes the set of keys —
// creating, evicting, removing — happens under one mutex, which also orders the keys by their
// stamps when it needs the least recently used one. A key created since the last snapshot is
// looked up under that mutex until the snapshot is made again, which happens once as many
// lookups have missed it as there are keys (as sync.Map promotes its dirty map), so that
// making snapshots costs O(1) per Get on average.
//
// Recency is exact while MaxKeys is below 32. From 32 keys on it is kept to within
// MaxKeys/16 keys, so that a hot set of keys does not write one shared word on every Get: a
// Get of a key that is among the MaxKeys/16 most recently stamped leaves its stamp as it is.
// The key evicted for capacity is then always among the MaxKeys/16 least recently used (of
// 10 000 keys, the default, among the 625 least recently used), never a recent one. The time of
// a key's last use, which idleness is measured from, is rounded up by at most 1 ms (see
// IdleTimeout).
type Keyed[K comparable, V any] struct {
	cfg       Config
	create    func(K) (V, error)
	evictions event.Publisher[Eviction[K, V]]
	idle      int64     // cfg.IdleTimeout in nanoseconds; 0 for NoIdleTimeout
	window    uint64    // a Get restamps a key only when this many stamps or more are newer
	base      time.Time // the origin of the entries' access times, a monotonic reading
	checkHits bool      // K can hold an interface: a key is checked before its lock-free lookup

	// Read by every Get, written only under mu.
	read     atomic.Pointer[map[K]*entry[K, V]] // the ready entries of the last snapshot
	nextIdle atomic.Int64                       // no ready entry is idle before this (ns since base)

	_   [64]byte      // keeps seq, written by every Get, off the cache line of read and nextIdle
	seq atomic.Uint64 // the last recency stamp handed out
	_   [56]byte

	// reading is the shared clock reading of the lock-free path (ns since base), or -1 once
	// it may be older than coarseGrain; timer retires it. timer is nil without IdleTimeout
	// and in a testing/synctest bubble, where every Get reads the clock. See hitTime.
	reading atomic.Int64
	_       [56]byte
	timer   *time.Timer

	mu sync.Mutex // guards everything below; never held across create or an eviction consumer
	// entries is every key held, creations under way included.
	entries map[K]*entry[K, V]
	// lru is a binary min-heap of the ready entries by their order, an access stamp no newer
	// than the entry's seq: the least recently used entry is found by bringing the top's
	// order up to its seq until the top's order is its seq (see oldestLocked).
	lru []*entry[K, V]
	// stale counts what the snapshot missed since it was made: Gets that took the lock, and
	// keys created or evicted. When it reaches the number of keys, the snapshot is made again.
	stale int
	// m.Hits counts the hits taken under mu and those of evicted entries; the others are in
	// the entries' ctl.
	m Metrics
}

// dead is the bit of entry.ctl set when the entry is evicted; the other bits count the Gets
// that found the entry in the snapshot.
const dead = 1 << 63

type entry[K comparable, V any] struct {
	key   K
	v     V             // written before the entry enters the snapshot or its ready is closed
	err   error         // likewise
	ready chan struct{} // guarded by mu: closed when create returned; nil for an entry that is ready

	ctl  atomic.Uint64 // dead | the hits of the lock-free path
	seq  atomic.Uint64 // the recency stamp of the last Get: larger is more recent
	last atomic.Int64  // the time of the last Get, ns since Keyed.base; 0 without IdleTimeout

	order uint64 // guarded by mu: the heap key, an earlier value of seq
	idx   int    // guarded by mu: the index in Keyed.lru, -1 when not in it
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
	k := &Keyed[K, V]{cfg: cfg, create: create, base: time.Now(), entries: make(map[K]*entry[K, V])}
	k.checkHits = mayBeUnhashable(reflect.TypeFor[K]())
	if cfg.IdleTimeout != NoIdleTimeout {
		k.idle = int64(cfg.IdleTimeout)
		if k.base != k.base.Round(0) { // Round(0) only strips a monotonic reading, which a bubble's time.Now lacks
			k.timer = time.AfterFunc(time.Hour, func() { k.reading.Store(-1) })
			k.timer.Stop()
		}
	}
	k.reading.Store(-1)
	k.window = max(1, uint64(cfg.MaxKeys/recencyWindow))
	k.read.Store(&map[K]*entry[K, V]{})
	k.nextIdle.Store(math.MaxInt64)
	return k, nil
}

// Config returns the configuration given to New with its defaults filled in.
func (k *Keyed[K, V]) Config() Config {
	if k.unset() {
		return Config{}
	}
	return k.cfg
}

// ErrNilKeyed is returned, instead of a panic, by Get (and the adapters over it) on a nil or
// zero Keyed.
var ErrNilKeyed = errors.New("keyed: nil or zero *Keyed (create one with keyed.New)")

// unset reports a nil Keyed or one not made by New.
func (k *Keyed[K, V]) unset() bool { return k == nil || k.create == nil }

// now returns the time since k.base in nanoseconds, or 0 when no key ever goes idle.
func (k *Keyed[K, V]) now() int64 {
	if k.idle == 0 {
		return 0
	}
	return int64(time.Since(k.base))
}

// coarseGrain is how long one clock reading serves the Gets of a Keyed with an IdleTimeout.
const coarseGrain = int64(time.Millisecond)

// hitTime returns the time of a Get for deciding whether a key is idle, now, and the time to
// record as its key's last use, at. A Get reads the clock only when no reading is shared:
// the first one after a reading was retired reads it and shares it for coarseGrain, after
// which a timer retires it. A shared reading is never later than the truth, so now is never
// late either: an idle key is evicted at most coarseGrain later than IdleTimeout; and at
// adds coarseGrain to it, so that a key used at t is never evicted before t + IdleTimeout
// (more only by the delay with which the runtime runs the timer). Both are 0 without
// IdleTimeout, and exact in a synctest bubble. No goroutine runs in the background: the
// timer fires once after the last Get that read the clock and is armed again only by the
// next such Get.
func (k *Keyed[K, V]) hitTime() (now, at int64) {
	if k.idle == 0 {
		return 0, 0
	}
	if k.timer != nil {
		if r := k.reading.Load(); r >= 0 {
			return r, ceilGrain(r + coarseGrain)
		}
	}
	now = int64(time.Since(k.base))
	// The timer is armed after the swap: armed before, it could fire before the swap and
	// leave the reading in place with no timer to retire it.
	if k.timer != nil && k.reading.CompareAndSwap(-1, now) {
		k.timer.Reset(time.Duration(coarseGrain))
	}
	return now, ceilGrain(now)
}

// Get returns the instance of key, creating it with New's create function if key has none:
// get-or-create, with create run once per key however many goroutines ask at the same time
// (the others wait for it, and receive its error if it fails). A failed create is not kept: the
// next Get tries again. A panic in create comes back as a *levee.PanicError. Get makes key the
// most recently used; it evicts idle keys first and, after a creation, the least recently used
// key beyond MaxKeys. A key protecting its dependency (see Protecting: an OPEN or HALF_OPEN
// breaker, a limiter with waiters, a bulkhead with calls in flight or waiting) is never
// evicted; when MaxKeys keys are held and all are protected, a new key is refused with an
// *AllKeysProtectedError (matching ErrAllKeysProtected, a levee rejection) rather than
// sharing another key's instance, whose state would then mix two dependencies. Getting a key that exists allocates nothing and,
// once the key is in the snapshot (see Keyed), takes no lock.
//
// A key that cannot be held is refused with a *KeyError (matching ErrKeyNotComparable), with
// nothing stored and create not called: a key that does not equal itself (a float NaN, or a
// struct, array or interface holding one), which no later Get could find, and a key of an
// interface type whose dynamic value is not comparable (K = any holding a []int), which Go
// cannot hash. The check costs nothing on the hit path of a key type without interfaces (a
// NaN key is never found there, so it is checked on the way to creating it); with
// interfaces in K, every Get compares the key with itself first.
func (k *Keyed[K, V]) Get(key K) (V, error) {
	if k.unset() {
		var zero V
		return zero, ErrNilKeyed
	}
	if k.checkHits {
		if err := checkKey(key); err != nil {
			var zero V
			return zero, err
		}
	}
	now, at := k.hitTime()
	if now < k.nextIdle.Load() { // no key to evict for idleness: the lock-free path may answer
		if e := (*k.read.Load())[key]; e != nil && e.ctl.Add(1)&dead == 0 {
			k.stamp(e, at)
			return e.v, nil
		}
	}
	return k.getLocked(key, now, at)
}

// recencyWindow is how precise recency is: to within MaxKeys/recencyWindow keys (see Keyed).
const recencyWindow = 16

// lastGrain is the grain of an entry's last use: the time is rounded up to it, so that Gets of
// one key within it write it once.
const lastGrain = int64(time.Millisecond)

// stamp makes e the most recently used entry, used at at (see hitTime), without the lock: a
// new recency stamp unless e is among the k.window most recent already (a hot set of keys
// writes no shared word), and its last use at at unless that is recorded already.
func (k *Keyed[K, V]) stamp(e *entry[K, V], at int64) {
	if k.seq.Load()-e.seq.Load() >= k.window {
		e.seq.Store(k.seq.Add(1))
	}
	if k.idle != 0 && at > e.last.Load() {
		e.last.Store(at)
	}
}

// ceilGrain rounds the time t, ≥ 0, up to a multiple of lastGrain.
func ceilGrain(t int64) int64 { return (t + lastGrain - 1) / lastGrain * lastGrain }

// getLocked is Get under the lock: idle keys evicted, a creation joined or started.
func (k *Keyed[K, V]) getLocked(key K, now, at int64) (V, error) {
	if key != key { // a NaN: checked before the lock, since it would never be found again
		var zero V
		return zero, checkKey(key)
	}
	var buf [4]Eviction[K, V]
	k.mu.Lock()
	ev := k.evictIdleLocked(now, buf[:0])
	k.stale++
	if e, ok := k.entries[key]; ok {
		k.m.Hits++
		if e.ready == nil {
			k.stamp(e, at)
			k.snapshotLocked()
			k.mu.Unlock()
			k.publish(ev)
			return e.v, nil
		}
		ready := e.ready
		k.snapshotLocked()
		k.mu.Unlock()
		k.publish(ev)
		<-ready
		return e.v, e.err // written before ready was closed
	}
	if k.fullOfProtectedLocked() {
		k.m.RefusedProtected++
		k.snapshotLocked()
		k.mu.Unlock()
		k.publish(ev)
		var zero V
		return zero, &AllKeysProtectedError{MaxKeys: k.cfg.MaxKeys}
	}
	e := &entry[K, V]{key: key, ready: make(chan struct{}), idx: -1}
	k.entries[key] = e
	k.m.Keys = len(k.entries)
	k.m.Misses++
	k.snapshotLocked()
	k.mu.Unlock()
	k.publish(ev)

	v, err := k.run(key)

	k.mu.Lock()
	ev = buf[:0]
	e.v, e.err = v, err
	ready := e.ready
	e.ready = nil
	if err != nil {
		delete(k.entries, key)
		k.m.CreateErrors++
	} else {
		k.m.Created++
		now = k.now()
		e.last.Store(ceilGrain(now))
		e.seq.Store(k.seq.Add(1))
		k.pushLocked(e)
		if next := idleAt(e.last.Load(), k.idle); k.idle != 0 && next < k.nextIdle.Load() {
			k.nextIdle.Store(next)
		}
		ev = k.evictOverLocked(e, ev)
		k.stale++
		k.snapshotLocked()
	}
	k.m.Keys = len(k.entries)
	close(ready)
	k.mu.Unlock()
	k.publish(ev)
	return v, err
}

// snapshotLocked makes the snapshot of the ready entries again once it has missed as much as
// there are keys: the copy then costs O(1) per miss.
func (k *Keyed[K, V]) snapshotLocked() {
	if k.stale == 0 || k.stale < len(k.lru) {
		return
	}
	m := make(map[K]*entry[K, V], len(k.lru))
	for _, e := range k.lru {
		m[e.key] = e
	}
	k.read.Store(&m)
	k.stale = 0
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
// is under way is not removed, and a key Get refuses (see ErrKeyNotComparable) is never there.
func (k *Keyed[K, V]) Remove(key K) bool {
	if k.unset() || checkKey(key) != nil { // a key Get refuses is never held
		return false
	}
	var buf [4]Eviction[K, V]
	now := k.now()
	k.mu.Lock()
	ev := k.evictIdleLocked(now, buf[:0])
	e, ok := k.entries[key]
	ok = ok && e.ready == nil
	if ok {
		ev = k.evictLocked(e, Removed, ev)
	}
	k.snapshotLocked()
	k.mu.Unlock()
	k.publish(ev)
	return ok
}

// Clear evicts every key whose creation is not under way (cause Removed), the least recently
// used first, for instance at shutdown so that the eviction consumers release what the
// instances hold.
func (k *Keyed[K, V]) Clear() {
	if k.unset() {
		return
	}
	k.mu.Lock()
	var ev []Eviction[K, V]
	for _, e := range k.byRecencyLocked() {
		ev = k.evictLocked(e, Removed, ev)
	}
	k.snapshotLocked()
	k.mu.Unlock()
	k.publish(ev)
}

// EvictIdle evicts the keys idle for IdleTimeout or longer and returns how many it evicted.
// Every access does it already; call it from a ticker of your own when a Keyed may go
// untouched for long while its instances hold resources.
func (k *Keyed[K, V]) EvictIdle() int {
	if k.unset() {
		return 0
	}
	now := k.now()
	k.mu.Lock()
	ev := k.evictIdleLocked(now, nil)
	k.snapshotLocked()
	k.mu.Unlock()
	k.publish(ev)
	return len(ev)
}

// All returns the keys and instances held when it is called, most recently used first, as an
// iterator. It evicts idle keys first and does not make any key more recently used. The
// iteration runs outside every lock: the loop body may call k.
func (k *Keyed[K, V]) All() iter.Seq2[K, V] {
	if k.unset() {
		return func(func(K, V) bool) {}
	}
	now := k.now()
	k.mu.Lock()
	ev := k.evictIdleLocked(now, nil)
	k.snapshotLocked()
	es := k.byRecencyLocked()
	keys := make([]K, len(es))
	vals := make([]V, len(es))
	for i, e := range es {
		keys[len(es)-1-i], vals[len(es)-1-i] = e.key, e.v
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
	if k.unset() {
		return func() {}
	}
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
