package leveestatus

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

// transitionsKept is how many state transitions of a breaker the dashboard shows.
const transitionsKept = 5

// record is one event of any pattern, as the event endpoints show it.
type record struct {
	name     string
	typ      string
	time     time.Time
	err      error
	duration time.Duration
	timed    bool // duration is set
	from, to string
	attempts int    // retry: numberOfAttempts
	limit    int    // adaptive limiter: the limit after the event
	seq      uint64 // publication order within its instance
}

// ring keeps the last len(buf) records.
type ring struct {
	mu   sync.Mutex
	size int      // the most records kept
	buf  []record // grows by append up to size, so an idle instance costs no buffer
	next int
	full bool
}

func newRing(n int) *ring { return &ring{size: n} }

func (r *ring) add(rec record) {
	r.mu.Lock()
	if !r.full && len(r.buf) < r.size {
		r.buf = append(r.buf, rec)
		r.next = len(r.buf)
	} else {
		r.buf[r.next] = rec
		r.next++
	}
	if r.next == r.size {
		r.next, r.full = 0, true
	}
	r.mu.Unlock()
}

// records returns the records kept, oldest first.
func (r *ring) records() []record {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.full {
		return append([]record(nil), r.buf[:r.next]...)
	}
	out := make([]record, 0, len(r.buf))
	out = append(out, r.buf[r.next:]...)
	return append(out, r.buf[:r.next]...)
}

// eventStore keeps the last size events of each event type of one instance, so that a burst
// of one type (a storm of NOT_PERMITTED while a breaker is OPEN) cannot push out the last
// events of another (the ERROR that opened it). Unfiltered, it shows the last size events of
// every type together, which are exactly the last size events published: an event among
// those is among the last size of its own type.
type eventStore struct {
	size   int
	mu     sync.Mutex
	seq    uint64
	byType map[string]*ring
}

func newEventStore(size int) *eventStore {
	return &eventStore{size: size, byType: map[string]*ring{}}
}

func (s *eventStore) add(rec record) {
	s.mu.Lock()
	s.seq++
	rec.seq = s.seq
	r := s.byType[rec.typ]
	if r == nil {
		r = newRing(s.size)
		s.byType[rec.typ] = r
	}
	r.add(rec) // under s.mu, so that seq order is ring order
	s.mu.Unlock()
}

// records returns the events kept of type typ, or for typ "" the last size events of every
// type, oldest first.
func (s *eventStore) records(typ string) []record {
	s.mu.Lock()
	defer s.mu.Unlock()
	if typ != "" {
		if r := s.byType[typ]; r != nil {
			return r.records()
		}
		return nil
	}
	var out []record
	for _, r := range s.byType {
		out = append(out, r.records()...)
	}
	slices.SortFunc(out, func(a, b record) int { return cmp.Compare(a.seq, b.seq) })
	if len(out) > s.size {
		out = out[len(out)-s.size:]
	}
	return out
}

// watch is the handler's subscription to one instance: its ring of events, its last state
// transitions (breakers only) and a count of its calls for the dashboard's calls per second.
type watch struct {
	instance    any
	unsubscribe func()
	events      *eventStore
	transitions *ring
	calls       atomic.Int64 // counted from events, for the patterns whose metrics do not count calls
}

func newWatch(h *Handler, p registry.Pattern, inst any, size int) *watch {
	w := &watch{instance: inst, events: newEventStore(size)}
	switch v := inst.(type) {
	case *circuitbreaker.CircuitBreaker:
		w.transitions = newRing(transitionsKept)
		w.unsubscribe = v.Subscribe(func(e circuitbreaker.Event) {
			rec := record{name: e.Name, typ: e.Type.String(), time: e.Time, err: e.Err}
			switch e.Type {
			case circuitbreaker.EventSuccess, circuitbreaker.EventError, circuitbreaker.EventIgnoredError:
				rec.duration, rec.timed = e.Duration, true
				w.calls.Add(1)
			case circuitbreaker.EventNotPermitted:
				w.calls.Add(1)
			case circuitbreaker.EventStateTransition:
				rec.from, rec.to = e.From.String(), e.To.String()
				w.transitions.add(rec)
			}
			w.events.add(rec)
			if e.Type == circuitbreaker.EventStateTransition {
				h.notify(streamNote{transition: &transitionView{
					Pattern: string(p), Name: e.Name, From: rec.from, To: rec.to, Time: formatTime(e.Time),
				}})
			}
		})
	case *retry.Retry:
		w.unsubscribe = v.Subscribe(func(e retry.Event) {
			w.events.add(record{name: e.Name, typ: e.Type.String(), time: e.Time, err: e.LastErr,
				attempts: e.NumberOfRetryAttempts})
		})
	case *bulkhead.Bulkhead:
		w.unsubscribe = v.Subscribe(func(e bulkhead.Event) { w.onBulkheadEvent(e) })
	case *async.WorkerPool:
		w.unsubscribe = v.Subscribe(func(e async.WorkerPoolEvent) { w.onBulkheadEvent(e) })
	case *ratelimiter.RateLimiter:
		w.unsubscribe = v.Subscribe(func(e ratelimiter.Event) {
			if e.Type != ratelimiter.EventDrained {
				w.calls.Add(1)
			}
			w.events.add(record{name: e.Name, typ: e.Type.String(), time: e.Time, err: e.Err})
		})
	case *timelimiter.TimeLimiter:
		w.unsubscribe = v.Subscribe(func(e timelimiter.Event) {
			w.events.add(record{name: e.Name, typ: e.Type.String(), time: e.Time, err: e.Err,
				duration: e.Duration, timed: true})
		})
	case *adaptive.Limiter:
		w.unsubscribe = v.Subscribe(func(e adaptive.Event) {
			w.events.add(record{name: e.Name, typ: e.Type.String(), time: e.Time, limit: e.Limit})
		})
	default:
		w.unsubscribe = func() {}
	}
	return w
}

func (w *watch) onBulkheadEvent(e bulkhead.Event) {
	if e.Type != bulkhead.EventCallFinished {
		w.calls.Add(1)
	}
	w.events.add(record{name: e.Name, typ: e.Type.String(), time: e.Time})
}

// formatTime renders t in RFC 3339 with the nanoseconds it has, in UTC.
func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
