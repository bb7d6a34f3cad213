// Package tracker counts the goroutines a time limiter leaves running, so that whoever
// started the calls can wait for them. An operator that promises "once the output is closed,
// every call has returned" puts a *Tracker in the context its calls get (With); a time limiter
// executing under that context counts the goroutine it starts for the call (From, Start, Done)
// until the goroutine ends, whether or not its caller stopped waiting; the operator waits for
// the count to drop to zero (Wait) before it closes its output.
//
// A time limiter is the only pattern that leaves a call running after its caller returned
// (Go cannot stop a goroutine), so counting there covers every pattern inside it, the bulkhead
// permit included: the goroutine ends only after the layers inside the limiter have returned.
package tracker

import (
	"context"
	"sync"
)

// Tracker counts running goroutines. The zero value is ready; a nil *Tracker counts nothing.
type Tracker struct {
	parent *Tracker // the tracker of the context With derived from: it counts the same goroutines
	mu     sync.Mutex
	n      int
	idle   chan struct{} // made by a waiter while n > 0; closed when n drops to 0
}

type key struct{}

// With returns a context derived from ctx that carries t. A tracker ctx already carries
// counts t's goroutines too, so that a wait on it covers those of operators inside it; t
// must not be in use yet.
func With(ctx context.Context, t *Tracker) context.Context {
	t.parent = From(ctx)
	return context.WithValue(ctx, key{}, t)
}

// From returns the *Tracker ctx carries, the innermost if several, or nil.
func From(ctx context.Context) *Tracker {
	t, _ := ctx.Value(key{}).(*Tracker)
	return t
}

// Start counts one more running goroutine. Unlike sync.WaitGroup's Add, it may be called
// while another goroutine waits with a count of zero: that waiter has already returned.
func (t *Tracker) Start() {
	for ; t != nil; t = t.parent {
		t.mu.Lock()
		t.n++
		t.mu.Unlock()
	}
}

// Done counts one goroutine fewer; each Start needs exactly one Done.
func (t *Tracker) Done() {
	for ; t != nil; t = t.parent {
		t.mu.Lock()
		t.n--
		if t.n == 0 && t.idle != nil {
			close(t.idle)
			t.idle = nil
		}
		t.mu.Unlock()
	}
}

// Running returns the number of goroutines counted now.
func (t *Tracker) Running() int {
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

// Wait blocks until no goroutine is counted, and reports true, or until done is closed, and
// reports false. A nil done never closes.
func (t *Tracker) Wait(done <-chan struct{}) bool {
	if t == nil {
		return true
	}
	t.mu.Lock()
	if t.n == 0 {
		t.mu.Unlock()
		return true
	}
	if t.idle == nil {
		t.idle = make(chan struct{})
	}
	idle := t.idle
	t.mu.Unlock()
	select {
	case <-idle:
		return true
	case <-done:
		return false
	}
}
