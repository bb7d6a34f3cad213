// Package event is the subscriber list every levee pattern publishes its events through.
//
// Publishing costs one atomic load when nobody subscribes, so patterns check Active before they
// build an event. Consumers run synchronously on the goroutine that caused the event, outside
// every lock of the pattern (a consumer may read the pattern that published the event), in the
// order they subscribed, as Resilience4j's EventProcessor. A consumer that panics does not break
// the publisher: the panic is recovered and the remaining consumers still run.
//
// Stream, Chan and Seq deliver the same events into a channel with a bounded buffer, or an
// iter.Seq over one: publishing into them is a non-blocking send that drops and counts an event
// finding the buffer full, and they end when their context is done (or Close, or the loop's
// break), with no goroutine of their own.
package event

import (
	"sync"
	"sync/atomic"
)

// Publisher holds the consumers of events of type E. The zero value is ready to use.
type Publisher[E any] struct {
	mu   sync.Mutex // serialises Subscribe and unsubscribe; never held while publishing
	subs atomic.Pointer[[]*consumer[E]]
	next uint64
}

type consumer[E any] struct {
	id uint64
	fn func(E)
}

// Active reports whether at least one consumer is subscribed. It is one atomic load.
func (p *Publisher[E]) Active() bool {
	s := p.subs.Load()
	return s != nil && len(*s) > 0
}

// Subscribe adds fn and returns the function that removes it. Calling the returned function
// more than once is harmless. A nil fn is ignored and the returned function does nothing.
func (p *Publisher[E]) Subscribe(fn func(E)) (unsubscribe func()) {
	if fn == nil {
		return func() {}
	}
	p.mu.Lock()
	p.next++
	c := &consumer[E]{id: p.next, fn: fn}
	var cur []*consumer[E]
	if s := p.subs.Load(); s != nil {
		cur = *s
	}
	n := make([]*consumer[E], 0, len(cur)+1)
	n = append(n, cur...)
	n = append(n, c)
	p.subs.Store(&n)
	p.mu.Unlock()

	var once sync.Once
	return func() { once.Do(func() { p.remove(c.id) }) }
}

func (p *Publisher[E]) remove(id uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.subs.Load()
	if s == nil {
		return
	}
	n := make([]*consumer[E], 0, len(*s))
	for _, c := range *s {
		if c.id != id {
			n = append(n, c)
		}
	}
	p.subs.Store(&n)
}

// Publish delivers e to every consumer subscribed when Publish starts.
func (p *Publisher[E]) Publish(e E) {
	s := p.subs.Load()
	if s == nil {
		return
	}
	for _, c := range *s {
		deliver(c.fn, e)
	}
}

func deliver[E any](fn func(E), e E) {
	defer func() { _ = recover() }() // a broken consumer must not break the pattern
	fn(e)
}
