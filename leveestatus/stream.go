package leveestatus

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/levee-go/levee/registry"
)

// streamNote wakes the streams: a breaker's transition, or (transition nil) a change of the
// registry's instances.
type streamNote struct {
	transition *transitionView
}

// streamBuffer is how many notes a stream holds before it drops them; the next snapshot
// shows the states anyway.
const streamBuffer = 64

// transitionView is the data of a "transition" event of GET /stream, and one of the last
// transitions in a snapshot.
type transitionView struct {
	Pattern string `json:"pattern,omitempty"`
	Name    string `json:"name,omitempty"`
	From    string `json:"from"`
	To      string `json:"to"`
	Time    string `json:"time"`
}

// snapshot is the data of a "snapshot" event of GET /stream: every instance, by pattern in
// the order of the status endpoints, then by name.
type snapshot struct {
	Time      string         `json:"time"`
	Instances []instanceView `json:"instances"`
}

// instanceView is one instance in a snapshot. State is set for breakers only; Details are the
// fields its status endpoint shows.
type instanceView struct {
	Pattern        string           `json:"pattern"`
	Name           string           `json:"name"`
	State          string           `json:"state,omitempty"`
	CallsPerSecond float64          `json:"callsPerSecond"`
	Calls          int64            `json:"calls"`
	Details        any              `json:"details"`
	Transitions    []transitionView `json:"transitions,omitempty"`
}

// patternOrder is the order of the patterns in a snapshot.
var patternOrder = []registry.Pattern{
	registry.CircuitBreaker, registry.Retry, registry.Bulkhead, registry.WorkerPool,
	registry.RateLimiter, registry.TimeLimiter,
	registry.AdaptiveLimiter, registry.PartitionedLimiter, registry.Prioritizer, registry.Throttler,
	registry.Keyed, registry.SharedRateLimiter, registry.SharedCircuitBreaker,
}

func (h *Handler) notify(n streamNote) {
	h.streamsMu.Lock()
	defer h.streamsMu.Unlock()
	for ch := range h.streams {
		select {
		case ch <- n:
		default: // a slow reader; its next snapshot catches up
		}
	}
}

// serveStream answers GET /stream with server-sent events: a "snapshot" at once and every
// SnapshotInterval, and at each breaker transition a "transition" followed by a fresh
// "snapshot". It ends when the request's context ends, a write fails, or the handler closes.
func (h *Handler) serveStream(w http.ResponseWriter, r *http.Request) {
	ch := make(chan streamNote, streamBuffer)
	h.streamsMu.Lock()
	h.streams[ch] = struct{}{}
	h.streamsMu.Unlock()
	defer func() {
		h.streamsMu.Lock()
		delete(h.streams, ch)
		h.streamsMu.Unlock()
	}()

	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Accel-Buffering", "no") // keep proxies such as nginx from buffering the stream
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)

	rates := rateMeter{last: map[key]sample{}}
	send := func(event string, v any) bool {
		b, err := json.Marshal(v)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return false
		}
		if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return false
		}
		return true
	}
	// The opening comment lets a client see the stream is up before the first snapshot.
	if _, err := io.WriteString(w, ": levee status stream\nretry: 2000\n\n"); err != nil {
		return
	}
	if !send("snapshot", h.snapshot(&rates, true)) {
		return
	}
	tick := time.NewTicker(h.opts.interval)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-h.done:
			return
		case <-tick.C:
			if !send("snapshot", h.snapshot(&rates, true)) {
				return
			}
		case n := <-ch:
			if n.transition != nil && !send("transition", n.transition) {
				return
			}
			if !send("snapshot", h.snapshot(&rates, false)) {
				return
			}
		}
	}
}

// rateMeter turns the cumulative call counts of successive snapshots into calls per second.
type rateMeter struct {
	last map[key]sample
}

type sample struct {
	calls int64
	at    time.Time
	rate  float64
}

// rate returns k's calls per second since its last measured snapshot; measure says whether
// this snapshot starts a new measure (a periodic one) or only repeats the last rate.
func (m *rateMeter) rate(k key, calls int64, now time.Time, measure bool) float64 {
	prev, ok := m.last[k]
	if !ok {
		m.last[k] = sample{calls: calls, at: now}
		return 0
	}
	if !measure {
		return prev.rate
	}
	rate := 0.0
	if dt := now.Sub(prev.at).Seconds(); dt > 0 && calls >= prev.calls {
		rate = float64(calls-prev.calls) / dt
	}
	m.last[k] = sample{calls: calls, at: now, rate: rate}
	return rate
}

// snapshot reads every instance of the registry.
func (h *Handler) snapshot(m *rateMeter, measure bool) snapshot {
	now := time.Now()
	out := snapshot{Time: formatTime(now), Instances: []instanceView{}}
	for _, p := range patternOrder {
		for _, inst := range h.instances(p) {
			w := h.watchOf(p, inst.name, inst.v)
			v := instanceView{Pattern: string(p), Name: inst.name}
			if w != nil {
				v.Calls = w.calls.Load()
			}
			v.Details, v.State, v.Calls = h.details(inst.v, v.Calls)
			if w != nil && w.transitions != nil {
				recs := w.transitions.records()
				for i := len(recs) - 1; i >= 0; i-- {
					v.Transitions = append(v.Transitions, transitionView{From: recs[i].from, To: recs[i].to, Time: formatTime(recs[i].time)})
				}
			}
			v.CallsPerSecond = m.rate(key{p, inst.name}, v.Calls, now, measure)
			out.Instances = append(out.Instances, v)
		}
	}
	return out
}
