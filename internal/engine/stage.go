// Package engine is the per-emission stage behind levee's stream operators (package stream)
// and its rxgo operators (the operators module), and the settings their options share: one
// ordered, bounded, concurrent stage, so that both packages behave alike and an option is
// written once.
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
// taken but not yet delivered: to the window when Ordered, which bounds the reorder window,
// the results held and what a slow consumer lets through; to n otherwise.
type Stage[I, R any] struct {
	Concurrency int  // calls at once, >= 1
	Window      int  // when Ordered: inputs taken and not yet delivered, >= Concurrency; 0 means Concurrency
	Ordered     bool // deliver in input order

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
	seq int
	in  I
}

func (s *Stage[I, R]) concurrent(done <-chan struct{}, wg *sync.WaitGroup) {
	n, w := s.Concurrency, s.Concurrency
	if s.Ordered && s.Window > n {
		w = s.Window
	}
	tokens := make(chan struct{}, w)
	jobs := make(chan job[I])
	total := make(chan int, 1) // the number of inputs, once the input has ended
	// Ordered results go to slot seq%w: the tokens guarantee that the result of input seq-w
	// has been taken from it before input seq is handed out, so a slot never holds two and
	// a worker never blocks on it. Unordered ones share one channel of the same capacity.
	var slots []chan R
	var results chan R
	if s.Ordered {
		slots = make([]chan R, w)
		for i := range slots {
			slots[i] = make(chan R, 1)
		}
	} else {
		results = make(chan R, w)
	}

	wg.Add(1 + n)
	go s.dispatch(done, wg, tokens, jobs, total)
	for range n {
		go s.work(done, wg, jobs, slots, results)
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

func (s *Stage[I, R]) dispatch(done <-chan struct{}, wg *sync.WaitGroup, tokens chan<- struct{}, jobs chan<- job[I], total chan<- int) {
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
		select {
		case jobs <- job[I]{seq, in}:
		case <-done:
			return
		}
	}
}

func (s *Stage[I, R]) work(done <-chan struct{}, wg *sync.WaitGroup, jobs <-chan job[I], slots []chan R, results chan<- R) {
	defer wg.Done()
	for {
		var j job[I]
		select {
		case j = <-jobs:
		case <-done:
			return
		}
		if chans.Closed(done) { // both were ready: a stopped stage makes no more calls
			return
		}
		r := s.Call(j.seq, j.in)
		if slots != nil {
			slots[j.seq%len(slots)] <- r
		} else {
			results <- r
		}
	}
}
