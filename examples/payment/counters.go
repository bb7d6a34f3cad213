package payment

import (
	"context"
	"sync"
	"sync/atomic"
)

// counters is what the gateway measures. Every figure is an atomic, read without locks; the
// in-flight gauge and its high-water mark change only under mu, so that the idle channel is
// replaced and closed exactly at the transitions between zero and one request in flight.
type counters struct {
	received    atomic.Int64
	cancelled   atomic.Int64
	inFlight    atomic.Int64
	maxInFlight atomic.Int64

	mu   sync.Mutex
	idle chan struct{} // closed while no request is in flight
}

func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// enter counts a request that reached a handler and returns its sequence number.
func (c *counters) enter() int64 {
	seq := c.received.Add(1)
	c.mu.Lock()
	n := c.inFlight.Add(1)
	if n == 1 {
		c.idle = make(chan struct{})
	}
	if n > c.maxInFlight.Load() {
		c.maxInFlight.Store(n)
	}
	c.mu.Unlock()
	return seq
}

// leave runs when a handler returns, before the server sends the answer, so a caller that has
// its answer already sees the request out of flight.
func (c *counters) leave() {
	c.mu.Lock()
	if c.inFlight.Add(-1) == 0 {
		close(c.idle)
	}
	c.mu.Unlock()
}

// Received returns how many requests reached the gateway's handlers since Start or
// ResetCounters, whatever their answer (a 422 counts; a request cut off before the server read
// it, or refused for a wrong method or path, does not).
func (g *Gateway) Received() int64 { return g.c.received.Load() }

// InFlight returns how many requests are in the gateway's handlers now.
func (g *Gateway) InFlight() int64 { return g.c.inFlight.Load() }

// MaxInFlight returns the highest InFlight seen since Start or ResetCounters: the concurrency
// the gateway really had to bear.
func (g *Gateway) MaxInFlight() int64 { return g.c.maxInFlight.Load() }

// CancelledByClient returns how many requests had their context end (the caller cancelled, its
// deadline passed, or its connection closed) before the gateway answered, since Start or
// ResetCounters. Requests ended by Close are not counted. The count rises when the handler
// notices, shortly after the caller has already returned; WaitIdle waits for that moment.
func (g *Gateway) CancelledByClient() int64 { return g.c.cancelled.Load() }

// ResetCounters sets Received and CancelledByClient to zero and MaxInFlight to the current
// InFlight, which is a live gauge and is not reset. Sequence numbers start again from 1.
func (g *Gateway) ResetCounters() {
	g.c.mu.Lock()
	g.c.received.Store(0)
	g.c.cancelled.Store(0)
	g.c.maxInFlight.Store(g.c.inFlight.Load())
	g.c.mu.Unlock()
}

// WaitIdle blocks until no request is in the gateway's handlers, or ctx ends (then it returns
// ctx's error). A caller whose request was cancelled gets its error before the gateway's handler
// has noticed; WaitIdle is how a program or test waits for the gateway to catch up before reading
// CancelledByClient. It does not wait for requests still on their way to the gateway.
func (g *Gateway) WaitIdle(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	g.c.mu.Lock()
	idle := g.c.idle
	g.c.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
