package leveestatus

import (
	"sync"
	"sync/atomic"
	"time"

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
	attempts int // retry: numberOfAttempts
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

// watch is the handler's subscription to one instance: its ring of events, its last state
// transitions (breakers only) and a count of its calls for the dashboard's calls per second.
type watch struct {
	instance    any
	unsubscribe func()
	events      *ring
	transitions *ring
	calls       atomic.Int64 // counted from events, for the patterns whose metrics do not count calls
}

func newWatch(h *Handler, p registry.Pattern, inst any, size int) *watch {
	w := &watch{instance: inst, events: newRing(size)}
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
