// Package engine is the per-emission stage behind levee's stream operators (package stream)
// and its rxgo operators (the operators module), and the settings their options share: one
// ordered, bounded, concurrent stage, so that both packages behave alike and an option is
// written once.
//
// It sits on the engines floor of levee's layout, beside stream and async, above the
// composition: it guards each element through the chain of the operator's *levee.Pipeline
// (internal/compose), which the operator converts the pipeline to once.
package engine

import (
	"sync"
	"sync/atomic"

	"github.com/levee-go/levee/internal/chans"
)

// Stage reads inputs I, makes one call per input returning an R, and delivers the Rs in input
// order (or in completion order when not Ordered).
//
// With a Concurrency of 1 the goroutine that runs it does everything. With n > 1 it starts
// n workers, each of which makes calls and hands their results on itself, with no goroutine
// between the calls and the output. Unordered, each worker takes its next input itself, as a
// hand-written worker pool does, and the n workers, holding one input each, bound the inputs
// taken but not yet delivered to n. Ordered or by key, the goroutine that runs it is a
// dispatcher that numbers the inputs and hands them to the workers, and a count bounds the
// inputs taken but not yet delivered to the window, which bounds the reorder window, the
// results held and what a slow consumer lets through. Ordered results wait in a slot of the
// window until every earlier one has been delivered; the worker that finds the next one in
// order delivers it and every ready one after it, while the others go on with the next inputs.
//
// With Lanes (and n > 1) the stage orders by key, as a Kafka consumer orders the records of one
// partition: the inputs of one key are called one at a time, in input order, and delivered in
// that order, each as soon as its call has ended (its key's earlier inputs are out by then);
// inputs of different keys are called in parallel and delivered in completion order. An input
// whose key is busy waits in its key's lane without holding a worker, and its key's worker
// calls it next; a key with nothing in flight has no lane. With Lanes and Ordered, the inputs
// of one key are called in the same way, and every result is delivered in input order, within
// the window: a result waits for the results of the inputs of other keys before it.
type Stage[I, R any] struct {
	Concurrency int  // calls at once, >= 1
	Window      int  // when Ordered or by key: inputs taken and not yet delivered, >= Concurrency; 0 means Concurrency
	Ordered     bool // deliver in input order, with Lanes too (per key and across keys)

	// Lanes, when set, gives each input the lane of its key, for the order by key; with a
	// Concurrency of 1 it is not used, the order being the input's. The stage calls it under
	// a lock of its own.
	Lanes LaneSet[I]
	// Fail is the result of an input that failed before its call, Lanes.Enter's error; needed
	// with Lanes.
	Fail func(seq int, in I, err error) R

	// Receive takes the next input; ok is false once the input has ended or done is closed.
	// Only one goroutine calls it at a time, in input order.
	Receive func(done <-chan struct{}) (in I, ok bool)
	// Call makes the call for the input numbered seq (from 0, in the order Receive gave them).
	// It runs on the workers, up to Concurrency at once.
	Call func(seq int, in I) R
	// Deliver hands a result on and reports whether the stage goes on. It runs on the
	// goroutine that runs the stage or on a worker, one result at a time (each call ends
	// before the next starts, and sees what the earlier ones did); once it has returned false
	// it is not called again.
	Deliver func(r R) bool
}

// Run runs the stage until the input ends and every result is delivered, Deliver returns
// false, or done is closed. Before it returns it calls stop, which must close done, and waits
// for every goroutine it started: then every call has returned. stop may also be called
// earlier, from a worker, when Deliver returns false; it must be safe to call more than once
// and from any goroutine (a context.CancelFunc is).
func (s *Stage[I, R]) Run(done <-chan struct{}, stop func()) {
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	if s.Concurrency <= 1 {
		s.serial(done)
		return
	}
	s.concurrent(done, stop, &wg)
}

func (s *Stage[I, R]) serial(done <-chan struct{}) {
	for seq := 0; ; seq++ {
		in, ok := s.Receive(done)
		if !ok || chans.Closed(done) {
			return
		}
		if !s.Deliver(s.Call(seq, in)) {
			return
		}
	}
}

type job[I any] struct {
	seq  int
	in   I
	lane *Lane // by key: the input's lane, nil for an input with no key
	err  error // by key: the input fails with err, without a call
}

// keyed is the state of the order by key: the lanes, and the inputs waiting in them, each in a
// slot of a pool sized to the window, so that a waiting input never needs a new one.
type keyed[I any] struct {
	mu    sync.Mutex
	lanes LaneSet[I]
	slots []waiting[I]
	free  []int // slots not in use
}

// waiting is an input waiting in its lane, linked to the next one of its key (-1: none).
type waiting[I any] struct {
	j    job[I]
	next int
}

func newKeyed[I any](lanes LaneSet[I], w int) *keyed[I] {
	k := &keyed[I]{lanes: lanes, slots: make([]waiting[I], w), free: make([]int, w)}
	for i := range k.free {
		k.free[i] = w - 1 - i
	}
	return k
}

// admit gives j its lane and reports whether j is to be called now: it has no key, or its key
// had nothing in flight. Otherwise j waits at the tail of its lane.
func (k *keyed[I]) admit(j *job[I]) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	l, err := k.lanes.Enter(j.in)
	if l == nil {
		j.err = err
		return true
	}
	j.lane = l
	if !l.busy {
		l.busy = true
		return true
	}
	// The tokens bound the inputs taken and not delivered to len(slots): one is free.
	i := k.free[len(k.free)-1]
	k.free = k.free[:len(k.free)-1]
	k.slots[i] = waiting[I]{j: *j, next: -1}
	if l.tail >= 0 {
		k.slots[l.tail].next = i
	} else {
		l.head = i
	}
	l.tail = i
	return false
}

// next returns the input of lane l to call after the one whose call has just ended and whose
// result is out, or forgets l when none waits.
func (k *keyed[I]) next(l *Lane) (job[I], bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	i := l.head
	if i < 0 {
		l.busy = false
		k.lanes.Leave(l)
		return job[I]{}, false
	}
	j := k.slots[i].j
	l.head = k.slots[i].next
	if l.head < 0 {
		l.tail = -1
	}
	k.slots[i] = waiting[I]{} // keep no input past its call
	k.free = append(k.free, i)
	return j, true
}

// pool is the state of a concurrent stage's run. Unordered, each of the n workers takes the
// next input itself, makes its call and hands the result on, as the workers of a hand-written
// pool do: one receive, one call and one send per element, with no goroutine of the stage's
// own between the input, the calls and the output. Ordered or by key, the goroutine running
// the stage is the dispatcher: it takes the inputs up to the window (by key, an input whose
// key is busy waits in its lane without holding a worker), numbers them and hands them out, and
// a free worker takes each input from it, calls and hands the result on itself. The hand-off
// is unbuffered: the dispatcher holds at most one input that no worker has yet, so that an
// input taken while every worker is busy goes to its key's lane whenever it can, and a worker
// whose key has inputs waiting calls them before any input of another key taken after them.
type pool[I, R any] struct {
	s    *Stage[I, R]
	done <-chan struct{}
	stop func()
	k    *keyed[I] // by key, nil otherwise
	jobs chan job[I]

	// Unordered, where the workers take the inputs themselves, under rsem: the next sequence
	// number, and whether Receive has reported the end (it is not called again).
	rsem  chan struct{}
	seq   int
	ended bool

	// The window: inputs taken and not yet delivered, at most w. Taken by the dispatcher,
	// given back by the workers delivering; room wakes the dispatcher when it waits for the
	// window and a result goes out.
	w     int64
	taken atomic.Int64
	room  chan struct{}

	// The output side. Unordered or by key only: the worker whose call ended delivers its
	// result holding dsem, a channel of capacity 1 used as a lock (a worker waiting for it is
	// durably blocked, which lets testing/synctest's fake clock advance, as it would not for a
	// sync.Mutex whose holder waits for the consumer). Ordered: results wait in slot seq%w
	// (under dmu, never held while blocking), and whichever worker finds the next one in order
	// there delivers it and every ready one after it, while the others go on calling.
	dsem       chan struct{}
	dmu        sync.Mutex
	stopped    bool // Deliver returned false: nothing more is delivered (under dsem or dmu)
	slots      []R
	ready      []bool
	next       int  // ordered: the sequence number of the next result to deliver
	delivering bool // ordered: a worker is delivering
}

func (s *Stage[I, R]) concurrent(done <-chan struct{}, stop func(), wg *sync.WaitGroup) {
	n, w := s.Concurrency, s.Concurrency
	if (s.Ordered || s.Lanes != nil) && s.Window > n {
		w = s.Window
	}
	p := &pool[I, R]{s: s, done: done, stop: stop, jobs: make(chan job[I]), w: int64(w), room: make(chan struct{}, 1)}
	if s.Lanes != nil {
		p.k = newKeyed(s.Lanes, w)
	}
	if s.Ordered {
		p.slots, p.ready = make([]R, w), make([]bool, w)
	} else {
		p.dsem = make(chan struct{}, 1)
	}
	if !s.Ordered && s.Lanes == nil {
		// Unordered: each worker takes its next input itself, as a hand-written pool's
		// workers read one channel, and the n workers, each holding one input, bound the
		// inputs taken and not delivered to n without a count to wait on.
		p.rsem = make(chan struct{}, 1)
		wg.Add(n)
		for range n {
			go func() {
				defer wg.Done()
				p.serve()
			}()
		}
		wg.Wait()
		return
	}
	wg.Add(n)
	for range n {
		go func() {
			defer wg.Done()
			p.work()
		}()
	}
	p.dispatch()
	close(p.jobs)
	wg.Wait() // the workers may still be calling or delivering: Run stops the stage after them
}

// serve is an unordered worker: it takes the next input (holding rsem, so that inputs are
// numbered in input order), calls and delivers, until the input ends or done is closed.
func (p *pool[I, R]) serve() {
	for {
		lock(p.rsem)
		if p.ended || chans.Closed(p.done) {
			unlock(p.rsem)
			return
		}
		in, ok := p.s.Receive(p.done)
		seq := p.seq
		p.seq++
		p.ended = !ok
		unlock(p.rsem)
		if !ok || chans.Closed(p.done) { // a stopped stage makes no more calls
			return
		}
		if !p.deliver(seq, p.s.Call(seq, in)) {
			return
		}
	}
}

// dispatch takes the inputs, each once the window has room for it, and hands them out, until the
// input ends or done is closed. By key, an input whose key is busy waits in its lane instead,
// for its key's worker.
func (p *pool[I, R]) dispatch() {
	for seq := 0; ; seq++ {
		for p.taken.Load() >= p.w {
			select {
			case <-p.room:
			case <-p.done:
				return
			}
		}
		p.taken.Add(1)
		in, ok := p.s.Receive(p.done)
		if !ok || chans.Closed(p.done) {
			return
		}
		j := job[I]{seq: seq, in: in}
		if p.k != nil && !p.k.admit(&j) {
			continue // waits for its key's worker
		}
		if !chans.Send(p.jobs, j, p.done) {
			return
		}
	}
}

// give gives the window's place of a delivered result back.
func (p *pool[I, R]) give() {
	if p.taken.Add(-1) == p.w-1 {
		select {
		case p.room <- struct{}{}:
		default:
		}
	}
}

func (p *pool[I, R]) work() {
	for j := range p.jobs {
		// By key, the worker goes on with the inputs waiting in j's lane until none is left.
		for {
			if chans.Closed(p.done) { // a stopped stage makes no more calls
				return
			}
			var r R
			if j.err != nil {
				r = p.s.Fail(j.seq, j.in, j.err)
			} else {
				r = p.s.Call(j.seq, j.in)
			}
			if !p.deliver(j.seq, r) {
				return
			}
			if j.lane == nil {
				break
			}
			var ok bool
			if j, ok = p.k.next(j.lane); !ok {
				break
			}
		}
	}
}

// deliver hands the result of input seq on, or leaves it in its slot for the worker
// delivering in order, and reports whether the stage goes on.
func (p *pool[I, R]) deliver(seq int, r R) bool {
	if p.slots == nil {
		lock(p.dsem)
		ok := !p.stopped && p.s.Deliver(r)
		if !ok {
			p.end()
		}
		unlock(p.dsem)
		if ok && p.rsem == nil {
			p.give()
		}
		return ok
	}
	w := len(p.slots)
	p.dmu.Lock()
	if p.stopped {
		p.dmu.Unlock()
		return false
	}
	p.slots[seq%w], p.ready[seq%w] = r, true
	if p.delivering {
		p.dmu.Unlock()
		return true
	}
	p.delivering = true
	for {
		i := p.next % w
		if !p.ready[i] || p.stopped {
			p.delivering = false
			stopped := p.stopped
			p.dmu.Unlock()
			return !stopped
		}
		r := p.slots[i]
		var zero R
		p.slots[i], p.ready[i] = zero, false // keep no result past its delivery
		p.next++
		p.dmu.Unlock()
		ok := p.s.Deliver(r)
		p.dmu.Lock()
		if !ok {
			p.end()
			p.delivering = false
			p.dmu.Unlock()
			return false
		}
		p.give()
	}
}

// lock takes sem, a channel of capacity 1 used as a lock. It does not watch done: the holder
// does, and gives sem back. One channel operation, not a select over two, costs less on the
// path every element takes.
func lock(sem chan struct{}) { sem <- struct{}{} }

// unlock gives sem back.
func unlock(sem chan struct{}) { <-sem }

// end stops the stage once Deliver has returned false; it runs under dsem or dmu.
func (p *pool[I, R]) end() {
	p.stopped = true
	p.stop()
}
