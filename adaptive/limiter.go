package adaptive

import (
	"math"
	"sync"
	"time"

	"github.com/levee-go/levee/internal/event"
	"github.com/levee-go/levee/internal/waiters"
)

// Limiter bounds the calls to one dependency that run at the same time, as a bulkhead does,
// but moves the bound by itself: it measures each call's latency and raises the limit while
// the dependency answers as fast as when idle, and lowers it when latency shows calls
// queueing at the dependency or calls are dropped. Its semantics are those of Netflix's
// concurrency-limits (a SimpleLimiter, or a blocking one when MaxQueued > 0). It is safe for
// concurrent use and serves calls of any result type. Create it with New; the zero value is
// not usable.
type Limiter struct {
	name    string
	cfg     Config
	fullErr *LimitExceededError // returned for every rejection: rejecting allocates nothing
	events  event.Publisher[Event]

	mu       sync.Mutex // guards everything below; never held across a user's call or an event consumer
	estimate float64    // the algorithm's limit, in [MinLimit, MaxLimit]
	limit    int        // floor(estimate): the calls admitted at once
	inFlight int
	queue    waiters.Queue[Permit] // the callers waiting for a slot, in arrival order
	// round counts the changes of limit. A permit remembers the round it was taken in, and only
	// a call taken in the current round moves the limit: a latency measured under an older
	// limit says nothing about the current one, and acting on it would overshoot.
	round uint64
	// Vegas averages the latencies of a window of limit calls of the current round (about one
	// round trip's worth) before it moves the limit, so that one call that happened to find the
	// dependency less busy than the others does not move it.
	windowSum      time.Duration
	windowCalls    int
	windowInFlight int           // the most calls in flight any call of the window started with
	noLoad         time.Duration // the lowest latency measured, 0 before the first
	permitted      uint64
	rejected       uint64
	dropped        uint64
}

// New returns a limiter named name (the name appears in errors, events and metrics) with the
// configuration cfg, its zero fields replaced by the defaults. It returns an error naming the
// field and its allowed range when a field is out of range, for example
//
//	adaptive: MinLimit must be in [1, MaxLimit (1000)], got -2
func New(name string, cfg Config) (*Limiter, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Limiter{
		name:     name,
		cfg:      cfg,
		fullErr:  &LimitExceededError{Name: name},
		estimate: float64(cfg.InitialLimit),
		limit:    cfg.InitialLimit,
	}, nil
}

// Name returns the name given to New, or "" for a nil l.
func (l *Limiter) Name() string {
	if l == nil {
		return ""
	}
	return l.name
}

// Config returns the configuration given to New with its defaults filled in, or the zero
// Config for a nil l.
func (l *Limiter) Config() Config {
	if l == nil {
		return Config{}
	}
	return l.cfg
}

// sampleKind is what a call's end tells the algorithm.
type sampleKind uint8

const (
	sampleIgnore  sampleKind = iota // no measurement: the call did not load the dependency
	sampleSuccess                   // a latency to learn from
	sampleDropped                   // the dependency dropped the call or timed out: overload
)

// finish ends one call taken in round with inFlight calls running (itself included), and
// returns the limit to publish when it changed (else -1).
func (l *Limiter) finishLocked(kind sampleKind, started time.Time, round uint64, inFlight int) int {
	l.inFlight--
	if kind == sampleIgnore {
		return -1
	}
	latency := time.Since(started)
	if kind == sampleDropped {
		l.dropped++
	} else if latency > 0 && (l.noLoad == 0 || latency < l.noLoad) {
		l.noLoad = latency
	}
	if round != l.round {
		return -1
	}
	if l.cfg.Algorithm == Vegas && kind == sampleSuccess {
		l.windowSum += latency
		l.windowCalls++
		l.windowInFlight = max(l.windowInFlight, inFlight)
		if l.windowCalls < l.limit {
			return -1
		}
		latency = l.windowSum / time.Duration(l.windowCalls)
		inFlight = l.windowInFlight
	}
	l.windowSum, l.windowCalls, l.windowInFlight = 0, 0, 0
	next := l.next(kind, latency, inFlight)
	next = math.Max(float64(l.cfg.MinLimit), math.Min(float64(l.cfg.MaxLimit), next))
	l.estimate = next
	if n := int(next); n != l.limit {
		l.limit = n
		l.round++
		return n
	}
	return -1
}

// next applies the algorithm to one measured call.
func (l *Limiter) next(kind sampleKind, latency time.Duration, inFlight int) float64 {
	e := l.estimate
	if l.cfg.Algorithm == AIMD {
		switch {
		case kind == sampleDropped || latency > l.cfg.Timeout:
			return e * l.cfg.BackoffRatio
		case inFlight*2 >= l.limit:
			return e + 1
		}
		return e
	}
	lg := math.Max(1, math.Log10(e))
	if kind == sampleDropped {
		return e - lg
	}
	if inFlight*2 < l.limit || latency <= 0 {
		return e
	}
	// Multiplying first keeps exact cases exact: 9 calls at 11.25 ms over 10 ms queue 1.0.
	queue := e * float64(latency-l.noLoad) / float64(latency)
	switch {
	case queue < l.cfg.Alpha*lg:
		return e + lg
	case queue > l.cfg.Beta*lg:
		return e - lg
	}
	return e
}

// admitLocked takes a permit when one is free and nobody queues ahead.
func (l *Limiter) admitLocked() bool {
	if l.inFlight >= l.limit || !l.queue.Empty() {
		return false
	}
	l.inFlight++
	l.permitted++
	return true
}

func (l *Limiter) publish(t EventType, limit int) {
	if l.events.Active() {
		l.events.Publish(Event{Name: l.name, Type: t, Time: time.Now(), Limit: limit})
	}
}
