package engine

import (
	"sync"
	"time"
)

// Pause holds the elements whose calls a levee pattern refused, for the PauseWhileOpen option
// of the per-emission operators. One element at a time is held: while it is, no other call of
// the stage starts (calls already running finish), and the held element's retry is the next
// call the stage makes; once that retry is admitted, the elements waiting behind it are tried. A nil *Pause holds nothing.
type Pause struct {
	// MaxWait bounds the time one element is held, 0 for no bound.
	MaxWait time.Duration
	// Watch subscribes wake to the events that may end a refusal and returns the function that
	// unsubscribes it; RetryAfter returns the time after which the refusal may be over by the
	// clock alone, 0 when only an event can end it. Both come from the stage's pipeline.
	Watch      func(wake func()) (stop func())
	RetryAfter func() time.Duration

	sem chan struct{} // holds a token while an element is held
}

// NewPause returns a Pause bounding each hold by maxWait (0: no bound).
func NewPause(maxWait time.Duration, watch func(wake func()) (stop func()), retryAfter func() time.Duration) *Pause {
	return &Pause{MaxWait: maxWait, Watch: watch, RetryAfter: retryAfter, sem: make(chan struct{}, 1)}
}

// Call makes one element's call with try, which makes the call, keeps its result and reports
// whether a levee pattern refused it; try calls admitted, from any goroutine, when the
// patterns let its call start (the guarded function is entered). While another element is
// held, Call waits before calling. When try is refused, Call holds the element: it waits until
// the refusal may be over (RetryAfter's time, or an event of Watch), then tries again, until
// try is not refused, the element has been held MaxWait (the last refused result stands), or
// done is closed. An element refused while another is held waits for that one to be let go,
// then tries again (and is held in its turn if refused again).
//
// A held element is let go as soon as its retry is admitted, not when that call ends: the
// elements waiting behind it are then tried at once, so permits that come free together (a
// bulkhead's, a limiter's cycle) run as many waiting elements as they can take, not one.
//
// It returns the time the element waited, up to the start of the try that was not refused,
// and false when done was closed first (the result is then moot).
func (p *Pause) Call(done <-chan struct{}, try func(admitted func()) (refused bool)) (paused time.Duration, ok bool) {
	if !p.pass(done) {
		return 0, false
	}
	if !try(func() {}) {
		return 0, true
	}
	for {
		select {
		case p.sem <- struct{}{}:
			d, ok, again := p.hold(done, try)
			paused += d
			if !again {
				return paused, ok
			}
			continue // admitted, then refused (a retry within the call): hold it anew
		default: // another element is held: wait for it, then try again
		}
		start := time.Now()
		ok := p.pass(done)
		paused += time.Since(start)
		if !ok {
			return paused, false
		}
		if !try(func() {}) {
			return paused, true
		}
	}
}

// pass waits until no element is held; false when done was closed first.
func (p *Pause) pass(done <-chan struct{}) bool {
	select {
	case p.sem <- struct{}{}:
		<-p.sem
		return true
	case <-done:
		return false
	}
}

// hold is Call for the element that holds the semaphore; it lets it go when a retry is
// admitted or on return. again reports a retry that was admitted and then refused: the
// semaphore is let go, and Call holds the element anew.
func (p *Pause) hold(done <-chan struct{}, try func(admitted func()) (refused bool)) (paused time.Duration, ok, again bool) {
	var let sync.Once
	release := func() { let.Do(func() { <-p.sem }) }
	defer release()
	start := time.Now()
	wakec := make(chan struct{}, 1)
	stop := p.Watch(func() {
		select {
		case wakec <- struct{}{}:
		default:
		}
	})
	defer stop()
	var bound <-chan time.Time
	if p.MaxWait > 0 {
		t := time.NewTimer(p.MaxWait)
		defer t.Stop()
		bound = t.C
	}
	// Try once at once if nothing tells when to: the refusal may have ended before Watch
	// subscribed (a bulkhead's permit given back meanwhile).
	first, last, skipped := true, false, false
	for {
		// An event that came during the last try is reflected by what RetryAfter reads when
		// the clock says how long the refusal lasts; when it does not (0), the event may be
		// the refusal's end (a HALF_OPEN breaker closing while the try was refused), so the
		// element is tried again at once rather than left to wait for a later event. Only
		// once in a row: the try itself may cause such an event (a bulkhead outside the
		// breaker finishing the refused call), and retrying on it again would never wait.
		woke := false
		select {
		case <-wakec:
			woke = true
		default:
		}
		after := p.RetryAfter()
		now := after == 0 && (first || (woke && !skipped))
		skipped = now && !first
		if !now {
			var tick <-chan time.Time
			var t *time.Timer
			if after > 0 {
				t = time.NewTimer(after)
				tick = t.C
			}
			// A retry due by the clock no later than the bound (a limiter's next cycle at the
			// very instant of it) is made: the element has not been held past maxWait. The two
			// timers are not raced, as a tie between them would be decided by chance.
			limit, atBound := bound, after > 0 && p.MaxWait > 0 && time.Since(start)+after == p.MaxWait
			if atBound {
				limit = nil
			}
			over, stopped := false, false
			select {
			case <-tick:
				last = atBound
			case <-wakec:
			case <-limit:
				over = true
			case <-done:
				stopped = true
			}
			if t != nil {
				t.Stop()
			}
			if over || stopped {
				return time.Since(start), over, false
			}
		}
		first = false
		held := time.Since(start) // the held element's retry starts here
		admitted := false
		var mu sync.Mutex
		refused := try(func() {
			mu.Lock()
			admitted = true
			mu.Unlock()
			release()
		})
		mu.Lock()
		in := admitted
		mu.Unlock()
		if !refused || last {
			return held, true, false
		}
		if in {
			return held, true, true
		}
	}
}
