package main

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/levee-go/levee/examples/payment"
)

// phase is a state the gateway is in, from one order of the stream on or for a time.
type phase struct {
	name string
	// from is the index of the first order that arrives in this phase; -1 for a phase that
	// begins when the one before it has lasted its time.
	from int
	mode payment.Mode // how the gateway answers meanwhile
	// lasts > 0 ends the phase that long after it began, by the clock, and begins the next
	// one (whose from is -1) whether or not orders arrive meanwhile.
	lasts time.Duration
}

// defaultPhases is the paced run of the program over 10,000 orders: healthy, failing, slow,
// and healthy again, long enough for the breaker to close. The phases switch by order count.
func defaultPhases(slowLatency time.Duration) []phase {
	return []phase{
		{"healthy", 0, payment.ModeOK, 0},
		{"failing (503)", 3000, payment.ModeFail, 0},
		{"slow (" + slowLatency.String() + ")", 5000, payment.ModeSlow, 0},
		{"healthy again", 7000, payment.ModeOK, 0},
	}
}

// backlogPhases is the paused run: the same phases, but the outage ends by the clock. A
// consumer that pauses while the breaker is open reads no order meanwhile, so an outage
// switched by order count would never end.
func backlogPhases(slowLatency, failFor, slowFor time.Duration) []phase {
	return []phase{
		{"healthy", 0, payment.ModeOK, 0},
		{"failing (503)", 3000, payment.ModeFail, failFor},
		{"slow (" + slowLatency.String() + ")", -1, payment.ModeSlow, slowFor},
		{"healthy again", -1, payment.ModeOK, 0},
	}
}

// schedule moves the gateway through the phases: a phase with a from begins when that order
// arrives, so that the same orders meet the same phase on every run and in tests, whatever
// the machine's speed; a phase that lasts a time hands over to the next one on a timer.
type schedule struct {
	gw     *payment.Gateway
	phases []phase // the first starts at 0; a phase with from -1 follows one that lasts
	start  time.Time
	// current is the phase in force, read by the gateway's request hook and the breaker's
	// event consumer on their own goroutines.
	current atomic.Int32

	mu sync.Mutex // guards what follows: the producer and the phase timer write it
	// began[i] is when phase i began, since the run's start; -1 if not reached.
	began []time.Duration
	// arrived[i] is the phase order i arrived in.
	arrived []int32
	timer   *time.Timer // ends a phase that lasts; nil when none is running
	stopped bool        // no phase begins any more
}

func newSchedule(gw *payment.Gateway, phases []phase, start time.Time) *schedule {
	s := &schedule{gw: gw, phases: phases, began: make([]time.Duration, len(phases)), start: start}
	for i := range s.began {
		s.began[i] = -1 // not reached
	}
	return s
}

// enter is called by the producer before order i arrives: at the first order of a phase
// switched by count it switches the gateway's mode. Requests already in the gateway keep the
// mode they arrived under. It records the phase the order arrives in.
func (s *schedule) enter(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := int(s.current.Load())
	if s.began[p] < 0 && !s.stopped {
		s.begin(p)
	}
	for p+1 < len(s.phases) && s.phases[p+1].from >= 0 && i >= s.phases[p+1].from && !s.stopped {
		p++
		s.begin(p)
	}
	s.arrived = append(s.arrived, int32(p))
}

// begin puts phase p in force, and arms the timer that ends it if it lasts a time; s.mu is
// held.
func (s *schedule) begin(p int) {
	s.began[p] = time.Since(s.start)
	s.gw.SetMode(s.phases[p].mode)
	s.current.Store(int32(p))
	if s.phases[p].lasts <= 0 || p+1 >= len(s.phases) {
		return
	}
	s.timer = time.AfterFunc(s.phases[p].lasts, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.stopped && int(s.current.Load()) == p {
			s.begin(p + 1)
		}
	})
}

// stop ends the schedule once the stream has ended: no phase begins any more.
func (s *schedule) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	if s.timer != nil {
		s.timer.Stop()
	}
}

// of returns the index of the phase order i arrived in.
func (s *schedule) of(i int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int(s.arrived[i])
}

// now returns the index of the phase in force.
func (s *schedule) now() int { return int(s.current.Load()) }

// beganAt returns when each phase began, since the run's start (-1: not reached).
func (s *schedule) beganAt() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.began...)
}
