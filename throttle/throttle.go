package throttle

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/levee-go/levee/internal/errmatch"
	"github.com/levee-go/levee/internal/event"
	"github.com/levee-go/levee/internal/reject"
	"github.com/levee-go/levee/internal/safe"
)

// Throttler sheds calls on the client side with the probability of Google's SRE book, from
// the requests it sent and those the backend accepted over a sliding window (see the package
// comment). It is safe for concurrent use and serves calls of any result type. Create it with
// New; the zero value is not usable.
//
// Build one with New. The zero value, like nil, is not usable: every method and function
// answers it exactly as it answers a nil pointer (ErrNilThrottler, a zero answer or a no-op),
// never with a panic.
type Throttler struct {
	name     string
	cfg      Config
	random   func() float64
	bucket   time.Duration // Window / WindowBuckets
	start    time.Time     // the monotonic origin of the buckets
	errFull  *ThrottledError
	matchAny bool // no RecordErrors and no predicate: every error is a rejection
	record   errmatch.List
	events   event.Publisher[Event]

	mu      sync.Mutex
	buckets []counts // ring; buckets[epoch % len] holds epoch's counts
	epoch   int64    // the newest bucket's number since start
	total   counts   // the sum of buckets
	// Counted outside mu, so that an admission takes mu once.
	permitted atomic.Uint64
	throttled atomic.Uint64
}

type counts struct{ requests, accepts uint64 }

// New returns a throttler named name (the name appears in errors and metrics) with the
// configuration cfg, its zero fields replaced by the defaults, or an error naming the field
// and its allowed range, for example
//
//	throttle: K must be in [1, 1e6], got 0.5
func New(name string, cfg Config) (*Throttler, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	record, _ := compileRecordErrors(cfg.RecordErrors) // validate checked it
	t := &Throttler{
		record:   record,
		name:     name,
		cfg:      cfg,
		random:   cfg.Random,
		bucket:   cfg.Window / time.Duration(cfg.WindowBuckets),
		start:    time.Now(),
		errFull:  &ThrottledError{Name: name},
		matchAny: len(cfg.RecordErrors) == 0 && cfg.RecordErrorPredicate == nil,
		buckets:  make([]counts, cfg.WindowBuckets),
	}
	if t.random == nil {
		t.random = rand.Float64
	}
	t.subscribeLogger(cfg.Logger)
	return t, nil
}

// Name returns the name given to New, or "" for a nil t.
func (t *Throttler) Name() string {
	if t.unset() {
		return ""
	}
	return t.name
}

// Config returns the configuration given to New with its defaults filled in, or the zero
// Config for a nil t.
func (t *Throttler) Config() Config {
	if t.unset() {
		return Config{}
	}
	return t.cfg
}

// rollLocked advances the window to now, emptying the buckets that left it.
func (t *Throttler) rollLocked() {
	now := int64(time.Since(t.start) / t.bucket)
	if now <= t.epoch {
		return
	}
	n := int64(len(t.buckets))
	if now-t.epoch >= n {
		clear(t.buckets)
		t.total = counts{}
	} else {
		for e := t.epoch + 1; e <= now; e++ {
			b := &t.buckets[e%n]
			t.total.requests -= b.requests
			t.total.accepts -= b.accepts
			*b = counts{}
		}
	}
	t.epoch = now
}

func (t *Throttler) probabilityLocked() float64 {
	r, a := float64(t.total.requests), float64(t.total.accepts)
	return max(0, (r-t.cfg.K*a)/(r+1))
}

// RejectionProbability returns the probability with which a call would be refused now:
// max(0, (requests − K × accepts) / (requests + 1)) over the window. 0 for a nil t.
func (t *Throttler) RejectionProbability() float64 {
	if t.unset() {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rollLocked()
	return t.probabilityLocked()
}

// Acquire decides whether one call may be sent: with the rejection probability it returns
// t's *ThrottledError (matching ErrThrottled, the same value for every refusal by t), else a
// Permit to end with exactly one of OnSuccess, OnError or Release once the backend answered.
// A refusal is not counted in the window. A nil t returns ErrNilThrottler. It allocates
// nothing.
func (t *Throttler) Acquire() (Permit, error) {
	if t.unset() {
		return Permit{}, ErrNilThrottler
	}
	t.mu.Lock()
	t.rollLocked()
	p := t.probabilityLocked()
	t.mu.Unlock()
	if p > 0 {
		u, perr := t.draw()
		if perr != nil {
			return Permit{}, perr
		}
		if u < p {
			t.throttled.Add(1)
			t.publish(EventCallRejected, p, t.errFull)
			return Permit{}, t.errFull
		}
	}
	t.permitted.Add(1)
	t.publish(EventCallPermitted, p, nil)
	return Permit{t: t}, nil
}

// draw calls Random, user code: a panic fails the call with a *levee.PanicError rather than
// unwinding through Acquire.
func (t *Throttler) draw() (u float64, perr error) {
	defer func() {
		if v := recover(); v != nil {
			perr = safe.NewPanicError(v)
		}
	}()
	return t.random(), nil
}

// Permit is the right to send one call, taken by Acquire. End it once: OnSuccess when the
// backend accepted the request, OnError with the call's error, Release when the call never
// reached the backend. The methods of the zero Permit do nothing.
type Permit struct{ t *Throttler }

// OnSuccess counts a request the backend accepted.
func (p Permit) OnSuccess() { p.record(true) }

// OnError counts the call's outcome err: nil is OnSuccess; a levee rejection by an inner
// pattern and context.Canceled count nothing (the backend did not answer); an error matching
// RecordErrors or RecordErrorPredicate (every error, when neither is set) is a request the
// backend rejected; any other error is a request it accepted. A *levee.PanicError (a panic of
// the caller's own code, as a pipeline reports it) is a request the backend accepted, as
// Execute counts it.
func (p Permit) OnError(err error) {
	if p.t == nil {
		return
	}
	switch {
	case err == nil:
		p.record(true)
	case isPanic(err):
		p.record(true)
	case reject.Is(err), safe.Is(err, context.Canceled):
	default:
		p.record(!p.t.rejectedByBackend(err))
	}
}

// Release ends the permit without counting the call.
func (p Permit) Release() {}

func (t *Throttler) rejectedByBackend(err error) bool {
	if t.matchAny {
		return true
	}
	// Matching runs the Is and As methods of err, user code: a panic there counts the error
	// as a rejection, as a panicking RecordErrorPredicate does.
	if safe.Predicate(t.record.Match, err, true) {
		return true
	}
	return t.cfg.RecordErrorPredicate != nil && safe.Predicate(t.cfg.RecordErrorPredicate, err, true)
}

func (p Permit) record(accepted bool) {
	t := p.t
	if t.unset() {
		return
	}
	t.mu.Lock()
	t.rollLocked()
	b := &t.buckets[t.epoch%int64(len(t.buckets))]
	b.requests++
	t.total.requests++
	if accepted {
		b.accepts++
		t.total.accepts++
	}
	t.mu.Unlock()
}

// Metrics is a snapshot of a throttler, taken at one instant.
type Metrics struct {
	// Requests and Accepts are the calls sent to the backend and those it accepted within the
	// window.
	Requests, Accepts uint64
	// RejectionProbability is the probability a call is refused now.
	RejectionProbability float64
	// Permitted and Throttled count, since New, the calls let through and those refused
	// locally.
	Permitted, Throttled uint64
}

// Metrics returns a snapshot of t, or the zero Metrics for a nil t.
func (t *Throttler) Metrics() Metrics {
	if t.unset() {
		return Metrics{}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rollLocked()
	return Metrics{
		Requests: t.total.requests, Accepts: t.total.accepts,
		RejectionProbability: t.probabilityLocked(),
		Permitted:            t.permitted.Load(), Throttled: t.throttled.Load(),
	}
}

// unset reports whether t is nil or a zero Throttler that New never built: every exported
// method answers both as it answers nil.
func (t *Throttler) unset() bool { return t == nil || t.errFull == nil }
