package keyed

import (
	"cmp"
	"math"
	"slices"
)

// The least recently used order. Every ready entry is in k.lru, a binary min-heap by order.
// A Get stamps its entry's seq without the lock and leaves the heap alone, so an entry's order
// is an earlier stamp of it, never a later one (save when two Gets of one key race, whose
// order is undefined anyway). The entry on top whose order is its seq is then the least
// recently used: every other entry's seq is at least its order, which is at least the top's.

func (k *Keyed[K, V]) less(i, j int) bool { return k.lru[i].order < k.lru[j].order }

func (k *Keyed[K, V]) swap(i, j int) {
	k.lru[i], k.lru[j] = k.lru[j], k.lru[i]
	k.lru[i].idx = i
	k.lru[j].idx = j
}

func (k *Keyed[K, V]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !k.less(i, p) {
			return
		}
		k.swap(i, p)
		i = p
	}
}

// down moves the entry at i down to its place and reports whether it moved.
func (k *Keyed[K, V]) down(i int) bool {
	i0, n := i, len(k.lru)
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && k.less(r, c) {
			c = r
		}
		if !k.less(c, i) {
			break
		}
		k.swap(i, c)
		i = c
	}
	return i > i0
}

func (k *Keyed[K, V]) fix(i int) {
	if !k.down(i) {
		k.up(i)
	}
}

// pushLocked puts the ready entry e in the heap, by its stamp.
func (k *Keyed[K, V]) pushLocked(e *entry[K, V]) {
	e.order = e.seq.Load()
	e.idx = len(k.lru)
	k.lru = append(k.lru, e)
	k.up(e.idx)
}

// popLocked takes e out of the heap.
func (k *Keyed[K, V]) popLocked(e *entry[K, V]) {
	i, n := e.idx, len(k.lru)-1
	if i != n {
		k.swap(i, n)
	}
	k.lru[n] = nil
	k.lru = k.lru[:n]
	if i != n {
		k.fix(i)
	}
	e.idx = -1
}

// oldestLocked returns the least recently used ready entry, nil if there is none, bringing
// the heap's orders up to date on the way. Gets stamping entries meanwhile can keep the top
// changing: after as many steps as there are entries, the top is taken as it is.
func (k *Keyed[K, V]) oldestLocked() *entry[K, V] {
	if len(k.lru) == 0 {
		return nil
	}
	for range len(k.lru) {
		e := k.lru[0]
		s := e.seq.Load()
		if s == e.order {
			return e
		}
		e.order = s
		k.fix(0)
	}
	return k.lru[0]
}

// byRecencyLocked returns the ready entries, the least recently used first.
func (k *Keyed[K, V]) byRecencyLocked() []*entry[K, V] {
	es := slices.Clone(k.lru)
	for _, e := range es {
		e.order = e.seq.Load()
	}
	slices.SortFunc(es, func(a, b *entry[K, V]) int { return cmp.Compare(a.order, b.order) })
	for i, e := range es { // sorted by order: a valid heap, which saves fixing the orders
		k.lru[i], e.idx = e, i
	}
	return es
}

// touchLocked makes e the most recently used entry, at now, and puts it in its place.
func (k *Keyed[K, V]) touchLocked(e *entry[K, V], now int64) {
	e.seq.Store(k.seq.Add(1))
	e.last.Store(ceilGrain(now))
	e.order = e.seq.Load()
	k.fix(e.idx)
}

// evictLocked forgets the ready entry e and appends its eviction to ev. Its ctl is marked
// dead, after which the lock-free path passes it by; the hits it counted join k.m.Hits.
func (k *Keyed[K, V]) evictLocked(e *entry[K, V], cause Cause, ev []Eviction[K, V]) []Eviction[K, V] {
	if e.idx >= 0 {
		k.popLocked(e)
	}
	delete(k.entries, e.key)
	k.m.Keys = len(k.entries)
	k.m.Hits += e.ctl.Or(dead) &^ dead
	k.stale++
	switch cause {
	case Capacity:
		k.m.EvictedCapacity++
	case Idle:
		k.m.EvictedIdle++
	case Removed:
		k.m.Removed++
	}
	return append(ev, Eviction[K, V]{Key: e.key, Value: e.v, Cause: cause})
}

// evictIdleLocked evicts the ready entries idle for IdleTimeout at now, the least recently
// used first, and records when the next one will be. A protected entry is not evicted: it is
// made the most recently used, its idle time starting again, so that the walk does not meet
// it again before IdleTimeout.
func (k *Keyed[K, V]) evictIdleLocked(now int64, ev []Eviction[K, V]) []Eviction[K, V] {
	if k.idle == 0 || now < k.nextIdle.Load() {
		return ev
	}
	for {
		e := k.oldestLocked()
		if e == nil {
			k.nextIdle.Store(math.MaxInt64)
			return ev
		}
		if last := e.last.Load(); now-last < k.idle {
			k.nextIdle.Store(idleAt(last, k.idle))
			return ev
		}
		if protected(any(e.v)) {
			k.touchLocked(e, now)
		} else {
			ev = k.evictLocked(e, Idle, ev)
		}
	}
}

// evictOverLocked evicts least recently used ready entries, other than keep, while more than
// MaxKeys are held. Entries being created and protected entries count but are not evicted, so
// that the keys held exceed MaxKeys only by creations under way and by keys that became
// protected while a creation ran (Get refuses a new key when all are protected).
func (k *Keyed[K, V]) evictOverLocked(keep *entry[K, V], ev []Eviction[K, V]) []Eviction[K, V] {
	var buf [8]*entry[K, V]
	kept := buf[:0]
	for len(k.entries) > k.cfg.MaxKeys {
		e := k.oldestLocked()
		if e == nil {
			break
		}
		if e != keep && !protected(any(e.v)) {
			ev = k.evictLocked(e, Capacity, ev)
		} else {
			k.popLocked(e)
			kept = append(kept, e)
		}
	}
	for _, e := range kept {
		k.pushLocked(e)
	}
	return ev
}

// idleAt returns when an entry last used at last goes idle, last + idle, or math.MaxInt64
// when that is beyond what an int64 holds (an IdleTimeout of centuries).
func idleAt(last, idle int64) int64 {
	if last > math.MaxInt64-idle {
		return math.MaxInt64
	}
	return last + idle
}
