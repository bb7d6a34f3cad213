package adaptive

import (
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
//
// Build one with New. The zero value, like nil, is not usable: every method and function
// answers it exactly as it answers a nil pointer (ErrNilLimiter, a zero answer or a no-op),
// never with a panic.
type Limiter struct {
	name    string
	cfg     Config
	fullErr *LimitExceededError // returned for every rejection: rejecting allocates nothing
	events  event.Publisher[Event]
	// released tells NotifyRelease's watchers that a permit came free.
	released event.Publisher[struct{}]

	mu       sync.Mutex // guards everything below; never held across a user's call or an event consumer
	alg      LimitAlgorithm
	limit    int // floor(alg.Limit()): the calls admitted at once
	inFlight int
	queue    waiters.Queue[Permit] // the callers waiting for a slot, in arrival order
	// round counts the changes of limit. A permit remembers the round it was taken in, and only
	// a call taken in the current round moves the limit: a latency measured under an older
	// limit says nothing about the current one, and acting on it would overshoot. Such a call
	// still teaches a baseline (staleObserver).
	round     uint64
	lowest    time.Duration // the lowest latency of a call not dropped, 0 before the first
	permitted uint64
	rejected  uint64
	dropped   uint64
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
		name:    name,
		cfg:     cfg,
		fullErr: &LimitExceededError{Name: name},
		alg:     newAlgorithm(cfg),
		limit:   cfg.InitialLimit,
	}, nil
}

// Name returns the name given to New, or "" for a nil l.
func (l *Limiter) Name() string {
	if l.unset() {
		return ""
	}
	return l.name
}

// Config returns the configuration given to New with its defaults filled in, or the zero
// Config for a nil l.
func (l *Limiter) Config() Config {
	if l.unset() {
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
	now := time.Now()
	s := Sample{At: now, RTT: now.Sub(started), InFlight: inFlight, Dropped: kind == sampleDropped}
	if s.Dropped {
		l.dropped++
	} else if s.RTT > 0 && (l.lowest == 0 || s.RTT < l.lowest) {
		l.lowest = s.RTT
	}
	if round != l.round {
		if o, ok := l.alg.(staleObserver); ok {
			o.observeStale(s)
		}
		return -1
	}
	next := l.alg.OnSample(s)
	if n := int(next); n != l.limit {
		l.limit = n
		l.round++
		return n
	}
	return -1
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

// unset reports whether l is nil or a zero Limiter that New never built: every exported
// method answers both as it answers nil.
func (l *Limiter) unset() bool { return l == nil || l.fullErr == nil }
