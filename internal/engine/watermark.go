package engine

import (
	"errors"
	"sync"
	"sync/atomic"
)

// Watermark is the commit watermark of one per-emission operator: Load returns the number of
// input elements, counted from the first, every one of which is done. An element is done once
// the operator has sent every Result it yields for it (none for an element Filter drops, one
// for Map, each value of the slice for FlatMap) and the consumer has acknowledged each of them
// with Ack. A Result sitting in the output channel's buffer, or received and not yet
// acknowledged, keeps its element and every later one from counting, so a consumer that
// commits Load as its offset never commits past an element it has not handled: at-least-once
// delivery, whatever the Concurrency, Window, Unordered or Buffer. An element whose call was
// cut by a cancellation yields no Result and never becomes done, so the watermark stops below
// it for good.
//
// It is a Kafka consumer's committed offset, or the position below which a queue's entries may
// be acknowledged. Load and Ack are safe for concurrent use. A Watermark serves one operator:
// give a new one, from NewWatermark, to each.
type Watermark struct {
	low   atomic.Int64 // elements [0, low) are done
	bound atomic.Bool  // given to an operator

	mu   sync.Mutex
	open map[int]*mark // elements >= low with a Result sent or expected
	sent []int         // indexes of the items sent and not yet acknowledged, in send order; -1: not an element's
	wake chan struct{} // closed when low moves, for WaitBelow; nil until one waits
}

// mark is what one element still waits for.
type mark struct {
	unacked  int  // Results sent and not yet acknowledged
	complete bool // every Result of the element has been sent
}

// NewWatermark returns a Watermark at 0, ready to be given to one operator.
func NewWatermark() *Watermark { return &Watermark{open: make(map[int]*mark)} }

// ErrWatermarkInUse is returned by an operator given a Watermark another operator already has.
var ErrWatermarkInUse = errors.New("CommitWatermark: the Watermark is already given to another operator")

// Bind gives w, checked by SetWatermark, to the operator about to start, or fails when w is
// already given.
func (w *Watermark) Bind() error {
	if !w.bound.CompareAndSwap(false, true) {
		return ErrWatermarkInUse
	}
	return nil
}

// Load returns the watermark: the number of elements from the first (index 0) that are all
// done, so that the element of index Load() is the first not done. It starts at 0, never goes
// down, and reaches the number of input elements once every one has yielded its Results and
// each has been acknowledged.
func (w *Watermark) Load() int { return int(w.low.Load()) }

// Ack acknowledges one Result of the element of input index index, received and handled by the
// consumer: call it once per Result taken from the output, with the Result's Index, in any
// order. An index below the watermark, or one with no Result left to acknowledge, is ignored.
// Use Ack or AckNext, not both, on one Watermark.
func (w *Watermark) Ack(index int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.open[index]
	if m == nil || m.unacked == 0 {
		return
	}
	m.unacked--
	// Forget one send of index, and the items at the head that belong to no element.
	for k, i := range w.sent {
		if i == index {
			w.sent = append(w.sent[:k], w.sent[k+1:]...)
			break
		}
	}
	for len(w.sent) > 0 && w.sent[0] < 0 {
		w.sent = w.sent[1:]
	}
	w.advance()
}

// AckNext acknowledges the oldest item sent on the output and not yet acknowledged: call it
// once per item taken from the output (a Result, a value or an error item alike), in the order
// received, when the items carry no index. Since a channel hands its items over in the order
// they were sent, the k-th call acknowledges the k-th item received. A call with nothing sent
// to acknowledge is ignored. Use Ack or AckNext, not both, on one Watermark.
func (w *Watermark) AckNext() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.sent) == 0 {
		return
	}
	index := w.sent[0]
	w.sent = w.sent[1:]
	if index < 0 {
		return
	}
	if m := w.open[index]; m != nil && m.unacked > 0 {
		m.unacked--
		w.advance()
	}
}

// Sending records that a Result of the element index is about to be sent. The operator calls
// it before the send, so that the consumer cannot acknowledge a Result not yet counted; a send
// that fails leaves the element never done.
func (w *Watermark) Sending(index int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.at(index).unacked++
	w.sent = append(w.sent, index)
}

// SendingOther records that an item that is no element's Result (an upstream error forwarded)
// is about to be sent, so that AckNext stays in step with the items received.
func (w *Watermark) SendingOther() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sent = append(w.sent, -1)
}

// Complete records that every Result of the element index has been sent.
func (w *Watermark) Complete(index int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.at(index).complete = true
	w.advance()
}

func (w *Watermark) at(index int) *mark {
	m := w.open[index]
	if m == nil {
		m = &mark{}
		w.open[index] = m
	}
	return m
}

// advance moves low past the elements that are done; w.mu is held.
func (w *Watermark) advance() {
	low := int(w.low.Load())
	for {
		m := w.open[low]
		if m == nil || !m.complete || m.unacked > 0 {
			break
		}
		delete(w.open, low)
		low++
	}
	if int64(low) != w.low.Load() && w.wake != nil {
		close(w.wake)
		w.wake = nil
	}
	w.low.Store(int64(low))
}
