package main

import (
	"sync/atomic"
	"time"

	"github.com/levee-go/levee/examples/payment"
)

// phase is a state the gateway is in from one order of the stream on.
type phase struct {
	name string
	from int          // index of the first order that arrives in this phase
	mode payment.Mode // how the gateway answers meanwhile
}

// defaultPhases is the run of the program over 10,000 orders: healthy, failing, slow, and
// healthy again, long enough for the breaker to close.
func defaultPhases(slowLatency time.Duration) []phase {
	return []phase{
		{"healthy", 0, payment.ModeOK},
		{"failing (503)", 3000, payment.ModeFail},
		{"slow (" + slowLatency.String() + ")", 5000, payment.ModeSlow},
		{"healthy again", 7000, payment.ModeOK},
	}
}

// schedule moves the gateway through the phases as the orders arrive: phases switch by order
// count, so that the same orders meet the same phase on every run and in tests, whatever the
// machine's speed.
type schedule struct {
	gw     *payment.Gateway
	phases []phase // by increasing from; the first starts at 0
	// current is the phase in force, read by the gateway's request hook and the breaker's
	// event consumer on their own goroutines.
	current atomic.Int32
	// began[i] is when phase i began, since the run's start; written by the producer only and
	// read once it has finished.
	began []time.Duration
	start time.Time
}

func newSchedule(gw *payment.Gateway, phases []phase, start time.Time) *schedule {
	s := &schedule{gw: gw, phases: phases, began: make([]time.Duration, len(phases)), start: start}
	for i := range s.began {
		s.began[i] = -1 // not reached
	}
	return s
}

// enter is called by the producer before order i arrives; at a phase's first order it switches
// the gateway's mode. Requests already in the gateway keep the mode they arrived under.
func (s *schedule) enter(i int) {
	p := s.of(i)
	if p == int(s.current.Load()) && s.began[p] >= 0 {
		return
	}
	s.began[p] = time.Since(s.start)
	s.gw.SetMode(s.phases[p].mode)
	s.current.Store(int32(p))
}

// of returns the index of the phase order i arrives in.
func (s *schedule) of(i int) int {
	p := 0
	for j, ph := range s.phases {
		if i >= ph.from {
			p = j
		}
	}
	return p
}

// now returns the index of the phase in force.
func (s *schedule) now() int { return int(s.current.Load()) }
