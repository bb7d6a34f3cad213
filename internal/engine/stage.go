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

	"github.com/levee-go/levee/internal/chans"
)

// Stage reads inputs I, makes one call per input returning an R, and delivers the Rs in input
// order (or in completion order when not Ordered).
//
// With a Concurrency of 1 the goroutine that runs it does everything. With n > 1 it starts
// n + 1 more: a dispatcher that numbers the inputs and hands them out, and n workers that make
// the calls, while the goroutine that runs it delivers. A token channel bounds the inputs
// taken but not yet delivered: to the window when Ordered or by key, which bounds the reorder
// window, the results held and what a slow consumer lets through; to n otherwise.
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
	// goroutine that runs the stage, one result at a time.
	Deliver func(r R) bool
}

// Run runs the stage until the input ends and every result is delivered, Deliver returns
// false, or done is closed. Before it returns it calls stop, which must close done, and waits
// for every goroutine it started: then every call has returned.
func (s *Stage[I, R]) Run(done <-chan struct{}, stop func()) {
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	if s.Concurrency <= 1 {
		s.serial(done)
		return
	}
	s.concurrent(done, &wg)
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

func (s *Stage[I, R]) concurrent(done <-chan struct{}, wg *sync.WaitGroup) {
	n, w := s.Concurrency, s.Concurrency
	ordered := s.Ordered
	if (ordered || s.Lanes != nil) && s.Window > n {
		w = s.Window
	}
	var k *keyed[I]
	if s.Lanes != nil {
		k = newKeyed(s.Lanes, w)
	}
	tokens := make(chan struct{}, w)
	jobs := make(chan job[I])
	total := make(chan int, 1) // the number of inputs, once the input has ended
	// Ordered results go to slot seq%w: the tokens guarantee that the result of input seq-w
	// has been taken from it before input seq is handed out, so a slot never holds two and
	// a worker never blocks on it (by key too: a key's worker puts the result of one of its
	// inputs in its slot before it calls the next). Unordered ones, and those ordered by key
	// only, share one channel of the same capacity: a key's worker sends the result of one of
	// its inputs before it calls the next, so they come out of the channel in the key's order.
	var slots []chan R
	var results chan R
	if ordered {
		slots = make([]chan R, w)
		for i := range slots {
			slots[i] = make(chan R, 1)
		}
	} else {
		results = make(chan R, w)
	}

	wg.Add(1 + n)
	go s.dispatch(done, wg, k, tokens, jobs, total)
	for range n {
		go s.work(done, wg, k, jobs, slots, results)
	}

	totalc, count := total, -1
	for next := 0; count < 0 || next < count; {
		from := results
		if slots != nil {
			from = slots[next%w]
		}
		var r R
		select {
		case r = <-from:
		case count = <-totalc:
			totalc = nil
			continue
		case <-done:
			return
		}
		next++
		if !s.Deliver(r) {
			return
		}
		<-tokens
	}
}

func (s *Stage[I, R]) dispatch(done <-chan struct{}, wg *sync.WaitGroup, k *keyed[I], tokens chan<- struct{}, jobs chan<- job[I], total chan<- int) {
	defer wg.Done()
	for seq := 0; ; seq++ {
		select {
		case tokens <- struct{}{}:
		case <-done:
			return
		}
		in, ok := s.Receive(done)
		if !ok {
			total <- seq
			return
		}
		if chans.Closed(done) {
			return
		}
		j := job[I]{seq: seq, in: in}
		if k != nil && !k.admit(&j) {
			continue // waits for its key's worker
		}
		select {
		case jobs <- j:
		case <-done:
			return
		}
	}
}

func (s *Stage[I, R]) work(done <-chan struct{}, wg *sync.WaitGroup, k *keyed[I], jobs <-chan job[I], slots []chan R, results chan<- R) {
	defer wg.Done()
	for {
		var j job[I]
		select {
		case j = <-jobs:
		case <-done:
			return
		}
		// By key, the worker goes on with the inputs waiting in j's lane until none is left.
		for {
			if chans.Closed(done) { // both were ready: a stopped stage makes no more calls
				return
			}
			var r R
			if j.err != nil {
				r = s.Fail(j.seq, j.in, j.err)
			} else {
				r = s.Call(j.seq, j.in)
			}
			if slots != nil {
				slots[j.seq%len(slots)] <- r
			} else {
				results <- r
			}
			if j.lane == nil {
				break
			}
			var ok bool
			if j, ok = k.next(j.lane); !ok {
				break
			}
		}
	}
}
