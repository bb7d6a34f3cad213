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
//
// A consumer may ask for some kinds of events only (SubscribeKinds): a kind is a bit the
// pattern assigns to each type of its events, and Wants tells, in one atomic load, whether any
// consumer asks for a kind, so that a pattern builds an event nobody wants for no one.
type Publisher[E any] struct {
	mu   sync.Mutex // serialises Subscribe and unsubscribe; never held while publishing
	subs atomic.Pointer[consumers[E]]
	next uint64
}

// consumers is one immutable subscriber list with the union of its consumers' kinds.
type consumers[E any] struct {
	list  []*consumer[E]
	kinds uint64
}

type consumer[E any] struct {
	id    uint64
	fn    func(E)
	kinds uint64
}

// AllKinds is the kind mask of a consumer subscribed with Subscribe: every event.
const AllKinds = ^uint64(0)

// Active reports whether at least one consumer is subscribed. It is one atomic load.
func (p *Publisher[E]) Active() bool {
	s := p.subs.Load()
	return s != nil && len(s.list) > 0
}

// Wants reports whether at least one consumer asks for an event of one of kinds. It is one
// atomic load.
func (p *Publisher[E]) Wants(kinds uint64) bool {
	s := p.subs.Load()
	return s != nil && s.kinds&kinds != 0
}

// Subscribe adds fn, for every event, and returns the function that removes it. Calling the
// returned function more than once is harmless. A nil fn is ignored and the returned function
// does nothing.
func (p *Publisher[E]) Subscribe(fn func(E)) (unsubscribe func()) {
	return p.SubscribeKinds(fn, AllKinds)
}

// SubscribeKinds is Subscribe for the events of kinds only: PublishKind delivers an event to
// fn only when its kind is one of them (Publish delivers every event). A nil fn or no kinds
// subscribes nothing.
func (p *Publisher[E]) SubscribeKinds(fn func(E), kinds uint64) (unsubscribe func()) {
	if fn == nil || kinds == 0 {
		return func() {}
	}
	p.mu.Lock()
	p.next++
	c := &consumer[E]{id: p.next, fn: fn, kinds: kinds}
	var cur []*consumer[E]
	if s := p.subs.Load(); s != nil {
		cur = s.list
	}
	n := make([]*consumer[E], 0, len(cur)+1)
	n = append(n, cur...)
	n = append(n, c)
	p.subs.Store(newConsumers(n))
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
	n := make([]*consumer[E], 0, len(s.list))
	for _, c := range s.list {
		if c.id != id {
			n = append(n, c)
		}
	}
	p.subs.Store(newConsumers(n))
}

func newConsumers[E any](list []*consumer[E]) *consumers[E] {
	s := &consumers[E]{list: list}
	for _, c := range list {
		s.kinds |= c.kinds
	}
	return s
}

// Publish delivers e to every consumer subscribed when Publish starts, whatever kinds it
// asked for.
func (p *Publisher[E]) Publish(e E) { p.PublishKind(e, AllKinds) }

// PublishKind delivers e, an event of kind, to every consumer subscribed when PublishKind
// starts that asked for kind.
func (p *Publisher[E]) PublishKind(e E, kind uint64) {
	s := p.subs.Load()
	if s == nil {
		return
	}
	for _, c := range s.list {
		if c.kinds&kind != 0 {
			deliver(c.fn, e)
		}
	}
}

func deliver[E any](fn func(E), e E) {
	defer func() { _ = recover() }() // a broken consumer must not break the pattern
	fn(e)
}
