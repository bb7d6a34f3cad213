package event

import (
	"context"
	"iter"
	"sync"
	"sync/atomic"
)

// MaxBuffer is the largest buffer of a Stream, in events.
const MaxBuffer = 1 << 16

// Stream is a subscription that delivers events into a channel with a bounded buffer instead
// of a callback. Publishing into it never blocks: an event that finds the buffer full is
// dropped and counted (Dropped). No goroutine serves it; the channel is closed, and the
// subscription removed, when the context given to Publisher.Stream is done or Close is called,
// whichever comes first.
type Stream[E any] struct {
	mu      sync.Mutex // orders the initial event before published ones; guards closed and ch's closing
	ch      chan E
	closed  bool
	dropped *atomic.Uint64
	unsub   func()
	stop    func() bool
	once    sync.Once
}

// Stream subscribes a channel of capacity buffer (a buffer below 1 is taken as 1, since a
// non-blocking send into an unbuffered channel would drop nearly every event, and one above
// MaxBuffer as MaxBuffer, since the channel's buffer is allocated at once and a huge one would
// panic or exhaust memory). If initial is
// not nil and returns true, its event is the first one in the channel, ahead of every event
// published after the subscription; it is read after subscribing, so an event published while
// the subscription is made may follow it. The channel is closed when ctx is done or Close is
// called. A nil ctx is taken as context.Background (then only Close ends the stream).
func (p *Publisher[E]) Stream(ctx context.Context, buffer int, initial func() (E, bool)) *Stream[E] {
	return p.stream(ctx, buffer, initial, new(atomic.Uint64))
}

func (p *Publisher[E]) stream(ctx context.Context, buffer int, initial func() (E, bool), dropped *atomic.Uint64) *Stream[E] {
	buffer = min(max(buffer, 1), MaxBuffer)
	if ctx == nil {
		ctx = context.Background()
	}
	s := &Stream[E]{ch: make(chan E, buffer), dropped: dropped}
	s.mu.Lock()
	s.unsub = p.Subscribe(s.push)
	if initial != nil {
		if e, ok := initial(); ok {
			s.ch <- e // the buffer is empty and holds at least one event
		}
	}
	s.stop = context.AfterFunc(ctx, s.Close) // runs Close on its own goroutine, after Unlock
	s.mu.Unlock()
	return s
}

// push is the stream's consumer: a non-blocking send, counted as a drop when the buffer is full.
func (s *Stream[E]) push(e E) {
	s.mu.Lock()
	if !s.closed {
		select {
		case s.ch <- e:
		default:
			s.dropped.Add(1)
		}
	}
	s.mu.Unlock()
}

// C returns the channel the events arrive on, in publication order. It is closed when the
// stream ends; events already buffered can still be received after that.
func (s *Stream[E]) C() <-chan E { return s.ch }

// Dropped returns how many events found the buffer full and were discarded since the stream
// was created.
func (s *Stream[E]) Dropped() uint64 { return s.dropped.Load() }

// Close removes the subscription and closes the channel. Calling it more than once, or after
// the context is done, is harmless.
func (s *Stream[E]) Close() {
	s.once.Do(func() {
		s.mu.Lock()
		stop, unsub := s.stop, s.unsub
		s.mu.Unlock()
		stop()
		unsub() // after this no new Publish reaches push; one already under way finds closed
		s.mu.Lock()
		s.closed = true
		close(s.ch)
		s.mu.Unlock()
	})
}

// Seq returns an iterator over the events published while it is ranged over, and the count of
// events dropped so far by all its iterations. Each range statement subscribes its own Stream
// (buffer and initial as in Stream) when it starts and removes it when the loop body breaks or
// ctx is done; the loop then ends after the events already buffered. Events published before
// the range statement starts are not seen.
func (p *Publisher[E]) Seq(ctx context.Context, buffer int, initial func() (E, bool)) (seq iter.Seq[E], dropped func() uint64) {
	n := new(atomic.Uint64)
	seq = func(yield func(E) bool) {
		s := p.stream(ctx, buffer, initial, n)
		defer s.Close()
		for e := range s.ch {
			if !yield(e) {
				return
			}
		}
	}
	return seq, n.Load
}

// Chan is Stream for callers that expose only the channel and the drop count: the stream ends
// when ctx is done.
func (p *Publisher[E]) Chan(ctx context.Context, buffer int, initial func() (E, bool)) (events <-chan E, dropped func() uint64) {
	s := p.Stream(ctx, buffer, initial)
	return s.C(), s.Dropped
}

// Closed returns a closed channel and a drop count of 0: the stream of a nil pattern.
func Closed[E any]() (events <-chan E, dropped func() uint64) {
	ch := make(chan E)
	close(ch)
	return ch, func() uint64 { return 0 }
}

// Empty returns an iterator that yields nothing and a drop count of 0: the Seq of a nil
// pattern.
func Empty[E any]() (seq iter.Seq[E], dropped func() uint64) {
	return func(func(E) bool) {}, func() uint64 { return 0 }
}
