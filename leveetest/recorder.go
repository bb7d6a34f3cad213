package leveetest

import (
	"sync"
	"testing"
)

// Recorder keeps the events of one pattern, in the order they were published, for assertions.
// It is safe for concurrent use: patterns publish on the goroutine that caused the event.
// Create it with Record.
type Recorder[E any] struct {
	mu     sync.Mutex
	events []E
}

// Record subscribes a new Recorder to the events of a pattern through subscribe, the
// pattern's Subscribe method value, and unsubscribes it when the test and its subtests end
// (t.Cleanup):
//
//	events := leveetest.Record(t, breaker.Subscribe) // *Recorder[circuitbreaker.Event]
//
// Every pattern of levee has such a method (circuitbreaker, retry, bulkhead, ratelimiter,
// timelimiter, fallback, async's worker pool, chaos). The recorder sees only events published
// after Record returns. A nil subscribe records nothing.
func Record[E any](t testing.TB, subscribe func(func(E)) (unsubscribe func())) *Recorder[E] {
	t.Helper()
	r := &Recorder[E]{}
	if subscribe == nil {
		return r
	}
	if unsubscribe := subscribe(r.add); unsubscribe != nil {
		t.Cleanup(unsubscribe)
	}
	return r
}

func (r *Recorder[E]) add(e E) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Events returns a copy of the events recorded so far, oldest first.
func (r *Recorder[E]) Events() []E {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]E(nil), r.events...)
}

// Len returns the number of events recorded so far.
func (r *Recorder[E]) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

// Count returns the number of events recorded so far for which match reports true; a nil
// match counts them all.
func (r *Recorder[E]) Count(match func(E) bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if match == nil {
		return len(r.events)
	}
	n := 0
	for _, e := range r.events {
		if match(e) {
			n++
		}
	}
	return n
}

// Reset forgets the events recorded so far; the recorder keeps recording.
func (r *Recorder[E]) Reset() {
	r.mu.Lock()
	r.events = nil
	r.mu.Unlock()
}
