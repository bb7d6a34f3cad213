package keyed

import (
	"github.com/levee-go/levee/circuitbreaker"
)

// Metrics is a snapshot of a Keyed: figures for the whole set of keys, never one per key, so
// that a metrics backend gets a bounded set of series however many keys come and go.
type Metrics struct {
	// Keys is the number of keys held, creations under way included.
	Keys int
	// Hits and Misses count the Gets that found their key (or its creation under way) and
	// those that created it.
	Hits, Misses uint64
	// Created and CreateErrors count the creations that succeeded and those that failed.
	Created, CreateErrors uint64
	// EvictedCapacity, EvictedIdle and Removed count the evictions by cause.
	EvictedCapacity, EvictedIdle, Removed uint64
	// RefusedProtected counts the Gets refused because every key held was protected.
	RefusedProtected uint64
}

// Metrics evicts idle keys, as every access does, and returns a snapshot of k. It adds up the
// hits each key counts on its own (so that Gets share no counter), which takes a step per key.
func (k *Keyed[K, V]) Metrics() Metrics {
	if k.unset() {
		return Metrics{}
	}
	now := k.now()
	k.mu.Lock()
	ev := k.evictIdleLocked(now, nil)
	k.snapshotLocked()
	m := k.m
	for _, e := range k.lru {
		m.Hits += e.ctl.Load() &^ dead
	}
	k.mu.Unlock()
	k.publish(ev)
	return m
}

// CountBy returns how many instances of k fall under each label, label being called on each
// instance held (see All) outside every lock of k: an aggregate with one series per label
// rather than one per key.
func CountBy[K comparable, V any, L comparable](k *Keyed[K, V], label func(V) L) map[L]int {
	counts := make(map[L]int)
	for _, v := range k.All() {
		counts[label(v)]++
	}
	return counts
}

// CircuitBreakerStates returns how many of k's circuit breakers are in each state, every
// state present (with 0 when none is in it): for a gauge labelled by state, as
// resilience4j_circuitbreaker_state{state}, that stays six series however many keys there are.
// A nil breaker is not counted.
func CircuitBreakerStates[K comparable](k *Keyed[K, *circuitbreaker.CircuitBreaker]) map[circuitbreaker.State]int {
	counts := make(map[circuitbreaker.State]int, 6)
	for s := circuitbreaker.Closed; s <= circuitbreaker.MetricsOnly; s++ {
		counts[s] = 0
	}
	for _, cb := range k.All() {
		if cb != nil {
			counts[cb.State()]++
		}
	}
	return counts
}
