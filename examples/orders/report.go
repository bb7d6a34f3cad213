package main

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/examples/payment"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/stream"
	"github.com/levee-go/levee/timelimiter"
)

// cause is why an order was not priced live.
type cause int

const (
	causeOpen    cause = iota // the breaker refused the call: the gateway was not asked
	causeGateway              // the gateway failed (503) on every attempt allowed
	causeTimeout              // the last attempt ran out of time
	causeRefused              // the bulkhead or the rate limiter refused the call
	causeOther                // anything else: a bug in the program or the library
	numCauses
)

// classify names the cause of err, the pipeline's error (which the fallback's error, if any,
// keeps in its chain).
func classify(err error) cause {
	switch {
	case errors.Is(err, circuitbreaker.ErrCallNotPermitted):
		return causeOpen
	case errors.Is(err, bulkhead.ErrBulkheadFull), errors.Is(err, ratelimiter.ErrRequestNotPermitted):
		return causeRefused
	case errors.Is(err, timelimiter.ErrTimeout):
		return causeTimeout
	case errors.Is(err, payment.ErrGateway):
		return causeGateway
	default:
		return causeOther
	}
}

// phaseTally counts the results of the orders that arrived in one phase.
type phaseTally struct {
	orders, live, cached, noPrice int
	causes                        [numCauses]int // of the cached and no-price results
	began, ended                  time.Duration  // since the run's start; began < 0: never reached
}

// transition is a state transition of the breaker, from its events.
type transition struct {
	at       time.Duration // since the run's start
	phase    int           // the phase in force
	from, to circuitbreaker.State
}

// report is what a run measured, and the material of its checks.
type report struct {
	cfg    config
	url    string
	phases []phaseTally
	// Per phase i: the requests the gateway received and those it answered 503 (from its
	// request hook, on the server's goroutines), and the attempts the time limiter cut off
	// (from its events, on the callers' goroutines).
	requests, answered503, timedOut []atomic.Int64

	in, out    int // orders sent by the producer, results received by the consumer
	outOfOrder int // results whose Index was not the next one
	// settledMisses counts the orders of the first phase not priced live for a 503 or an
	// unknown error, leaving out the last Concurrency ones: those may still be in flight when
	// the gateway changes. Timeouts, and the refusals they cause, do not count: how fast a
	// healthy answer comes back depends on the machine's load, not on the program.
	settledMisses int
	wrongLive     int // live answers that are not the gateway's price for the SKU
	// wrongCached counts fallback answers that are not the SKU's price marked stale.
	wrongCached int
	// firstLive is the index of the first order priced live, per SKU. missedCache counts
	// orders left without a price although their SKU was priced live at least Concurrency
	// orders earlier: that price was in the cache before the order was read.
	firstLive   map[string]int
	missedCache int
	// unexpected counts failures other than "no last known price"; firstUnexpected keeps one.
	unexpected      int
	firstUnexpected error

	mu          sync.Mutex // guards transitions: the breaker publishes on the callers' goroutines
	transitions []transition
	finalState  circuitbreaker.State

	maxInFlight, limit  int64 // the gateway's high-water mark, and the bulkhead's size
	received, cancelled int64 // requests the gateway received, and saw cancelled by the client
	permitsBack         bool  // every bulkhead permit was back once the stream ended

	// held counts the orders PauseWhileOpen held after their call was refused; paused sums
	// the time they waited (Result.Paused), longest is the longest of them. Holds overlap
	// (an order refused while another is held is held after it), so the sum exceeds the time
	// the consumer stood still, and the longest hold falls short of it when the outage
	// outlasts one order's hold.
	held            int
	paused, longest time.Duration

	goroutinesBefore, goroutinesAfter int
	elapsed                           time.Duration
}

func newReport(cfg config, url string) *report {
	return &report{
		cfg:         cfg,
		url:         url,
		phases:      make([]phaseTally, len(cfg.Phases)),
		firstLive:   map[string]int{},
		requests:    make([]atomic.Int64, len(cfg.Phases)),
		answered503: make([]atomic.Int64, len(cfg.Phases)),
		timedOut:    make([]atomic.Int64, len(cfg.Phases)),
	}
}

// add counts one result of the stream, for an order that arrived in phase ph.
func (r *report) add(res stream.Result[Order, Quote], ph int) {
	if res.Index != r.out {
		r.outOfOrder++
	}
	r.out++
	if res.Paused > 0 {
		r.held++
		r.paused += res.Paused
		r.longest = max(r.longest, res.Paused)
	}
	t := &r.phases[ph]
	t.orders++
	price := payment.ListPrice(res.In.SKU)
	live := res.Err == nil && !res.Fallback
	if ph == 0 && !live && (len(r.cfg.Phases) == 1 || res.Index < r.cfg.Phases[1].from-r.cfg.Concurrency) {
		why := res.Cause
		if res.Err != nil {
			why = res.Err
		}
		// A healthy gateway answers every request with its price, so a 503 (or an error of
		// no known kind) is a miss the program must explain. A timeout is not: a loaded
		// machine may take longer than the time limit to carry a healthy answer, and the
		// breaker may open on such timeouts and refuse, as it should.
		if c := classify(why); c == causeGateway || c == causeOther {
			r.settledMisses++
		}
	}
	switch {
	case live:
		t.live++
		if _, ok := r.firstLive[res.In.SKU]; !ok {
			r.firstLive[res.In.SKU] = res.Index
		}
		if res.Value.SKU != res.In.SKU || res.Value.UnitCents != price || res.Value.Stale {
			r.wrongLive++
		}
	case res.Err == nil:
		t.cached++
		t.causes[classify(res.Cause)]++
		// Prices never change here, so the last known price is the gateway's price.
		if res.Value.SKU != res.In.SKU || res.Value.UnitCents != price || !res.Value.Stale {
			r.wrongCached++
		}
	case errors.Is(res.Err, fallback.ErrNoLastKnown):
		t.noPrice++
		t.causes[classify(res.Err)]++
		// The stream takes at most Concurrency orders ahead of the results sent, so the result
		// of an order that many places earlier had been sent, and its price cached, before
		// this order was read.
		if j, ok := r.firstLive[res.In.SKU]; ok && j <= res.Index-r.cfg.Concurrency {
			r.missedCache++
		}
	default:
		r.unexpected++
		if r.firstUnexpected == nil {
			r.firstUnexpected = res.Err
		}
	}
}

// transition records a state transition of the breaker; it runs on the goroutine of the call
// that caused it.
func (r *report) transition(at time.Duration, ph int, from, to circuitbreaker.State) {
	r.mu.Lock()
	r.transitions = append(r.transitions, transition{at: at, phase: ph, from: from, to: to})
	r.mu.Unlock()
}

// finish closes the phases' time spans once the stream has ended.
func (r *report) finish(s *schedule, final circuitbreaker.State) {
	r.mu.Lock()
	r.finalState = final
	r.mu.Unlock()
	began := s.beganAt()
	for i := range r.phases {
		r.phases[i].began, r.phases[i].ended = began[i], -1
		if began[i] < 0 {
			continue
		}
		r.phases[i].ended = r.elapsed
		for j := i + 1; j < len(r.phases); j++ {
			if began[j] >= 0 {
				r.phases[i].ended = began[j]
				break
			}
		}
	}
}

// total sums the phases.
func (r *report) total() phaseTally {
	var t phaseTally
	for _, p := range r.phases {
		t.orders += p.orders
		t.live += p.live
		t.cached += p.cached
		t.noPrice += p.noPrice
		for c := range t.causes {
			t.causes[c] += p.causes[c]
		}
	}
	return t
}
