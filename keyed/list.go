package keyed

import "time"

func (k *Keyed[K, V]) pushFrontLocked(e *entry[K, V]) {
	e.prev, e.next = nil, k.head
	if k.head != nil {
		k.head.prev = e
	} else {
		k.tail = e
	}
	k.head = e
}

func (k *Keyed[K, V]) removeFromListLocked(e *entry[K, V]) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		k.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		k.tail = e.prev
	}
	e.prev, e.next = nil, nil
}

// touchLocked makes e the most recently used entry.
func (k *Keyed[K, V]) touchLocked(e *entry[K, V], now time.Time) {
	e.last = now
	if k.head != e {
		k.removeFromListLocked(e)
		k.pushFrontLocked(e)
	}
}

// unlinkLocked forgets e.
func (k *Keyed[K, V]) unlinkLocked(e *entry[K, V]) {
	k.removeFromListLocked(e)
	delete(k.entries, e.key)
	k.m.Keys = len(k.entries)
}

// evictLocked forgets e and appends its eviction to ev.
func (k *Keyed[K, V]) evictLocked(e *entry[K, V], cause Cause, ev []Eviction[K, V]) []Eviction[K, V] {
	k.unlinkLocked(e)
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

// evictIdleLocked evicts the ready entries idle for IdleTimeout at now. They are a suffix of
// the list, save for entries being created, which are skipped. A protected entry is not
// evicted: it is made the most recently used, its idle time starting again, so that the walk
// does not meet it again before IdleTimeout.
func (k *Keyed[K, V]) evictIdleLocked(now time.Time, ev []Eviction[K, V]) []Eviction[K, V] {
	if k.cfg.IdleTimeout == NoIdleTimeout {
		return ev
	}
	var stop *entry[K, V] // the first entry moved to the front: the walk has seen the rest
	for e := k.tail; e != nil && e != stop; {
		prev := e.prev
		if e.ready == nil {
			if now.Sub(e.last) < k.cfg.IdleTimeout {
				break
			}
			if protected(any(e.v)) {
				k.touchLocked(e, now)
				if stop == nil {
					stop = e
				}
			} else {
				ev = k.evictLocked(e, Idle, ev)
			}
		}
		e = prev
	}
	return ev
}

// evictOverLocked evicts least recently used ready entries, other than keep, while more than
// MaxKeys are held. Entries being created and protected entries count but are not evicted, so
// that the keys held exceed MaxKeys only by creations under way and by keys that became
// protected while a creation ran (Get refuses a new key when all are protected).
func (k *Keyed[K, V]) evictOverLocked(keep *entry[K, V], ev []Eviction[K, V]) []Eviction[K, V] {
	for e := k.tail; e != nil && len(k.entries) > k.cfg.MaxKeys; {
		prev := e.prev
		if e.ready == nil && e != keep && !protected(any(e.v)) {
			ev = k.evictLocked(e, Capacity, ev)
		}
		e = prev
	}
	return ev
}
