package circuitbreaker

import "sync"

// transitionGate delivers the events of the breaker's transitions in the order of the
// transitions. Periods are installed by compare-and-swap and their events published after,
// outside every lock, so two goroutines making successive transitions (a failure opening the
// breaker, then a caller finding the open wait already over) could otherwise publish them in
// the wrong order, and a subscriber following the state from its events would end in the wrong
// one. Each period carries the sequence number of its transition (its predecessor's plus one),
// and the events of number n go out only after those of n-1: the goroutine that finds the next
// number ready delivers it, and every later one that is ready. A transition made by a
// subscriber while it is being called is delivered after that call returns, by the same loop,
// so a subscriber may call back into the breaker.
type transitionGate struct {
	mu       sync.Mutex
	next     uint64 // the sequence number whose events go out next
	pending  map[uint64]func()
	draining bool
}

// deliver runs publish, which publishes the events of transition seq, once every earlier
// transition's have been published. It returns at once when another goroutine is delivering
// or an earlier transition's events are not ready yet; that goroutine, or the one publishing
// the earlier transition, runs publish.
func (g *transitionGate) deliver(seq uint64, publish func()) {
	g.mu.Lock()
	if g.pending == nil {
		g.pending = make(map[uint64]func())
	}
	g.pending[seq] = publish
	if g.draining {
		g.mu.Unlock()
		return
	}
	g.draining = true
	for {
		f, ok := g.pending[g.next]
		if !ok {
			break
		}
		delete(g.pending, g.next)
		g.next++
		g.mu.Unlock()
		f() // subscribers' panics are recovered by the publisher
		g.mu.Lock()
	}
	g.draining = false
	g.mu.Unlock()
}
