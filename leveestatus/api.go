package leveestatus

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

func (h *Handler) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", h.serveDashboard)
	mux.HandleFunc("GET /stream", h.serveStream)
	mux.HandleFunc("GET /health", h.serveHealth)

	mux.HandleFunc("GET /circuitbreakers", h.serveCircuitBreakers)
	mux.HandleFunc("GET /circuitbreakers/{name}", h.serveCircuitBreaker)
	mux.HandleFunc("POST /circuitbreakers/{name}", h.updateCircuitBreaker)
	// As Resilience4j's endpoints, these four list names; the details are under /details/.
	mux.HandleFunc("GET /retries", h.serveNames("retries", registry.Retry))
	mux.HandleFunc("GET /bulkheads", h.serveNames("bulkheads", registry.Bulkhead, registry.WorkerPool))
	mux.HandleFunc("GET /ratelimiters", h.serveNames("rateLimiters", registry.RateLimiter))
	mux.HandleFunc("GET /timelimiters", h.serveNames("timeLimiters", registry.TimeLimiter))
	mux.HandleFunc("GET /details/retries", h.serveRetries)
	mux.HandleFunc("GET /details/bulkheads", h.serveBulkheads)
	mux.HandleFunc("GET /details/ratelimiters", h.serveRateLimiters)
	mux.HandleFunc("GET /details/timelimiters", h.serveTimeLimiters)
	for _, k := range leveeKinds {
		mux.HandleFunc("GET /details/"+k.path, h.serveLeveeKind(k))
		mux.HandleFunc("GET /details/"+k.path+"/{name}", h.serveLeveeInstance(k))
	}

	for _, k := range eventKinds {
		mux.HandleFunc("GET /"+k.path, h.serveEvents(k))
		mux.HandleFunc("GET /"+k.path+"/{name}", h.serveEvents(k))
		mux.HandleFunc("GET /"+k.path+"/{name}/{eventType}", h.serveEvents(k))
	}
	return mux
}

func (h *Handler) serveCircuitBreakers(w http.ResponseWriter, _ *http.Request) {
	out := map[string]circuitBreakerDetails{}
	for _, cb := range h.reg.CircuitBreakers() {
		out[cb.Name()] = circuitBreakerView(cb)
	}
	writeJSON(w, http.StatusOK, map[string]any{"circuitBreakers": out})
}

func (h *Handler) serveCircuitBreaker(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	cb, ok := h.reg.FindCircuitBreaker(name)
	if !ok {
		writeError(w, r, http.StatusNotFound, notFound(registry.CircuitBreaker, name))
		return
	}
	writeJSON(w, http.StatusOK, circuitBreakerView(cb))
}

func notFound(p registry.Pattern, name string) string {
	return fmt.Sprintf("leveestatus: no %s named %q", p, name)
}

// stateUpdate is the body of POST /circuitbreakers/{name}, as Resilience4j's
// UpdateStateRequest.
type stateUpdate struct {
	UpdateState string `json:"updateState"`
}

// stateUpdateResult answers it, as Resilience4j's CircuitBreakerUpdateStateResponse.
type stateUpdateResult struct {
	CircuitBreakerName string `json:"circuitBreakerName"`
	CurrentState       string `json:"currentState"`
	Message            string `json:"message"`
}

// updateStates are the values of updateState and what each does.
var updateStates = map[string]func(*circuitbreaker.CircuitBreaker) error{
	"CLOSE":        (*circuitbreaker.CircuitBreaker).TransitionToClosedState,
	"FORCE_OPEN":   (*circuitbreaker.CircuitBreaker).TransitionToForcedOpenState,
	"DISABLE":      (*circuitbreaker.CircuitBreaker).TransitionToDisabledState,
	"METRICS_ONLY": (*circuitbreaker.CircuitBreaker).TransitionToMetricsOnlyState,
	"RESET":        func(cb *circuitbreaker.CircuitBreaker) error { cb.Reset(); return nil },
}

// maxBody bounds the body of a state update.
const maxBody = 4 << 10

func (h *Handler) updateCircuitBreaker(w http.ResponseWriter, r *http.Request) {
	if !h.opts.stateUpdates {
		writeError(w, r, http.StatusForbidden, "leveestatus: state updates are not enabled (EnableStateUpdates)")
		return
	}
	name := r.PathValue("name")
	cb, ok := h.reg.FindCircuitBreaker(name)
	if !ok {
		writeError(w, r, http.StatusNotFound, notFound(registry.CircuitBreaker, name))
		return
	}
	var body stateUpdate
	if err := decodeJSON(w, r, &body); err != nil {
		writeError(w, r, http.StatusBadRequest, "leveestatus: "+err.Error())
		return
	}
	update, ok := updateStates[body.UpdateState]
	if !ok {
		writeError(w, r, http.StatusBadRequest, fmt.Sprintf(
			"leveestatus: updateState must be one of CLOSE, FORCE_OPEN, DISABLE, METRICS_ONLY, RESET, got %q", body.UpdateState))
		return
	}
	if err := update(cb); err != nil {
		writeError(w, r, http.StatusConflict, err.Error())
		return
	}
	state := cb.State().String()
	writeJSON(w, http.StatusOK, stateUpdateResult{
		CircuitBreakerName: name,
		CurrentState:       state,
		Message:            name + " state has been changed successfully", // Resilience4j's message
	})
}

// decodeJSON reads r's body, at most maxBody bytes, into v; unknown fields are refused.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("body must be a JSON object such as {\"updateState\":\"FORCE_OPEN\"}: %w", err)
	}
	return nil
}

// serveNames answers {key: [names]}, the names of the instances of patterns sorted, as
// Resilience4j's RetryEndpoint, BulkheadEndpoint (semaphore and thread-pool bulkheads
// together), RateLimiterEndpoint and TimeLimiterEndpoint.
func (h *Handler) serveNames(key string, patterns ...registry.Pattern) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		names := []string{}
		for _, p := range patterns {
			for _, inst := range h.instances(p) {
				names = append(names, inst.name)
			}
		}
		slices.Sort(names)
		writeJSON(w, http.StatusOK, map[string]any{key: names})
	}
}

func (h *Handler) serveRetries(w http.ResponseWriter, _ *http.Request) {
	out := map[string]retryDetails{}
	for _, v := range h.reg.Retries() {
		out[v.Name()] = retryView(v)
	}
	writeJSON(w, http.StatusOK, map[string]any{"retries": out})
}

func (h *Handler) serveBulkheads(w http.ResponseWriter, _ *http.Request) {
	bhs := map[string]bulkheadDetails{}
	for _, v := range h.reg.Bulkheads() {
		bhs[v.Name()] = bulkheadView(v)
	}
	pools := map[string]threadPoolBulkheadDetails{}
	for _, v := range h.reg.WorkerPools() {
		pools[v.Name()] = workerPoolView(v)
	}
	writeJSON(w, http.StatusOK, map[string]any{"bulkheads": bhs, "threadPoolBulkheads": pools})
}

func (h *Handler) serveRateLimiters(w http.ResponseWriter, _ *http.Request) {
	out := map[string]rateLimiterDetails{}
	for _, v := range h.reg.RateLimiters() {
		out[v.Name()] = rateLimiterView(v)
	}
	writeJSON(w, http.StatusOK, map[string]any{"rateLimiters": out})
}

func (h *Handler) serveTimeLimiters(w http.ResponseWriter, _ *http.Request) {
	out := map[string]timeLimiterDetails{}
	for _, v := range h.reg.TimeLimiters() {
		out[v.Name()] = timeLimiterView(v)
	}
	writeJSON(w, http.StatusOK, map[string]any{"timeLimiters": out})
}

// eventKind describes one family of event endpoints.
type eventKind struct {
	path     string             // e.g. "circuitbreakerevents"
	listKey  string             // e.g. "circuitBreakerEvents"
	patterns []registry.Pattern // the namespaces searched
	types    []string           // the event types, Resilience4j's names
	dto      func(record) any
}

// enumNames returns the names of the event types from through to.
func enumNames[T interface {
	~int
	fmt.Stringer
}](from, to T) []string {
	var out []string
	for t := from; t <= to; t++ {
		out = append(out, t.String())
	}
	return out
}

var eventKinds = []eventKind{
	{
		path: "circuitbreakerevents", listKey: "circuitBreakerEvents",
		patterns: []registry.Pattern{registry.CircuitBreaker},
		types:    enumNames(circuitbreaker.EventSuccess, circuitbreaker.EventSlowCallRateExceeded),
		dto:      circuitBreakerEventView,
	},
	{
		path: "retryevents", listKey: "retryEvents",
		patterns: []registry.Pattern{registry.Retry},
		types:    enumNames(retry.EventRetry, retry.EventIgnoredError),
		dto:      retryEventView,
	},
	{
		path: "bulkheadevents", listKey: "bulkheadEvents",
		patterns: []registry.Pattern{registry.Bulkhead, registry.WorkerPool},
		types:    enumNames(bulkhead.EventCallPermitted, bulkhead.EventCallFinished),
		dto:      func(r record) any { return bulkheadEvent{r.name, r.typ, formatTime(r.time)} },
	},
	{
		path: "ratelimiterevents", listKey: "rateLimiterEvents",
		patterns: []registry.Pattern{registry.RateLimiter},
		types:    enumNames(ratelimiter.EventSuccessfulAcquire, ratelimiter.EventDrained),
		dto:      func(r record) any { return rateLimiterEvent{r.name, r.typ, formatTime(r.time)} },
	},
	{
		path: "timelimiterevents", listKey: "timeLimiterEvents",
		patterns: []registry.Pattern{registry.TimeLimiter},
		types:    enumNames(timelimiter.EventSuccess, timelimiter.EventTimeout),
		dto:      func(r record) any { return timeLimiterEvent{r.name, r.typ, formatTime(r.time)} },
	},
	{
		path: "details/adaptivelimiterevents", listKey: "adaptiveLimiterEvents",
		patterns: []registry.Pattern{registry.AdaptiveLimiter},
		types:    enumNames(adaptive.EventCallPermitted, adaptive.EventLimitChanged),
		dto: func(r record) any {
			e := adaptiveLimiterEvent{AdaptiveLimiterName: r.name, Type: r.typ, CreationTime: formatTime(r.time)}
			if r.limit >= 0 { // LIMIT_CHANGED's new limit; -1 for the others
				e.Limit = &r.limit
			}
			return e
		},
	},
}

// adaptiveLimiterEvent is an adaptive.Event, in the shape of Resilience4j's event DTOs.
type adaptiveLimiterEvent struct {
	AdaptiveLimiterName string `json:"adaptiveLimiterName"`
	Type                string `json:"type"`
	CreationTime        string `json:"creationTime"`
	Limit               *int   `json:"limit,omitempty"`
}

// circuitBreakerEvent is Resilience4j's CircuitBreakerEventDTO.
type circuitBreakerEvent struct {
	CircuitBreakerName string `json:"circuitBreakerName"`
	Type               string `json:"type"`
	CreationTime       string `json:"creationTime"`
	ErrorMessage       string `json:"errorMessage,omitempty"`
	DurationInMs       *int64 `json:"durationInMs,omitempty"`
	StateTransition    string `json:"stateTransition,omitempty"`
}

func circuitBreakerEventView(r record) any {
	e := circuitBreakerEvent{CircuitBreakerName: r.name, Type: r.typ, CreationTime: formatTime(r.time)}
	if r.err != nil {
		e.ErrorMessage = r.err.Error()
	}
	if r.timed {
		d := r.duration.Milliseconds()
		e.DurationInMs = &d
	}
	if r.from != "" {
		e.StateTransition = r.from + "_TO_" + r.to
	}
	return e
}

// retryEvent is Resilience4j's RetryEventDTO.
type retryEvent struct {
	RetryName        string `json:"retryName"`
	Type             string `json:"type"`
	CreationTime     string `json:"creationTime"`
	ErrorMessage     string `json:"errorMessage,omitempty"`
	NumberOfAttempts int    `json:"numberOfAttempts"`
}

func retryEventView(r record) any {
	e := retryEvent{RetryName: r.name, Type: r.typ, CreationTime: formatTime(r.time), NumberOfAttempts: r.attempts}
	if r.err != nil {
		e.ErrorMessage = r.err.Error()
	}
	return e
}

// bulkheadEvent, rateLimiterEvent and timeLimiterEvent are Resilience4j's event DTOs.
type bulkheadEvent struct {
	BulkheadName string `json:"bulkheadName"`
	Type         string `json:"type"`
	CreationTime string `json:"creationTime"`
}

type rateLimiterEvent struct {
	RateLimiterName string `json:"rateLimiterName"`
	Type            string `json:"type"`
	CreationTime    string `json:"creationTime"`
}

type timeLimiterEvent struct {
	TimeLimiterName string `json:"timeLimiterName"`
	Type            string `json:"type"`
	CreationTime    string `json:"creationTime"`
}

// serveEvents answers GET /{path}, /{path}/{name} and /{path}/{name}/{eventType}: the events
// kept of every instance, of one, or of one of one type, sorted by creation time (events of
// the same instant keep the order of instance names, then of publication). Each instance keeps
// the last events of each type apart (see eventStore): /{path}/{name}/{eventType} shows up to
// the buffer size of that type whatever the other types published since; without a type, an
// instance shows its last buffer-size events of all types, as Resilience4j's single ring.
// An unknown event type is 400 Bad Request.
func (h *Handler) serveEvents(k eventKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name, typ := r.PathValue("name"), strings.ToUpper(r.PathValue("eventType"))
		if typ != "" && !slices.Contains(k.types, typ) {
			// Spring answers a path variable it cannot convert (here to the event type enum) with
			// 400 Bad Request, as DefaultHandlerExceptionResolver does for a type mismatch.
			writeError(w, r, http.StatusBadRequest, fmt.Sprintf("leveestatus: no %s event type %q; the types are %s",
				k.patterns[0], r.PathValue("eventType"), strings.Join(k.types, ", ")))
			return
		}
		var recs []record
		found := false
		for _, p := range k.patterns {
			for _, inst := range h.instances(p) {
				if name != "" && inst.name != name {
					continue
				}
				found = true
				if w := h.watchOf(p, inst.name, inst.v); w != nil {
					recs = append(recs, w.events.records(typ)...)
				}
			}
		}
		if name != "" && !found {
			writeError(w, r, http.StatusNotFound, notFound(k.patterns[0], name))
			return
		}
		slices.SortStableFunc(recs, func(a, b record) int { return a.time.Compare(b.time) })
		out := make([]any, 0, len(recs))
		for _, rec := range recs {
			if typ == "" || rec.typ == typ {
				out = append(out, k.dto(rec))
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{k.listKey: out})
	}
}

type named struct {
	name string
	v    any
}

// instances lists the instances of pattern p in reg, sorted by name.
func (h *Handler) instances(p registry.Pattern) []named {
	var out []named
	add := func(name string, v any) { out = append(out, named{name, v}) }
	switch p {
	case registry.CircuitBreaker:
		for _, v := range h.reg.CircuitBreakers() {
			add(v.Name(), v)
		}
	case registry.Retry:
		for _, v := range h.reg.Retries() {
			add(v.Name(), v)
		}
	case registry.Bulkhead:
		for _, v := range h.reg.Bulkheads() {
			add(v.Name(), v)
		}
	case registry.WorkerPool:
		for _, v := range h.reg.WorkerPools() {
			add(v.Name(), v)
		}
	case registry.RateLimiter:
		for _, v := range h.reg.RateLimiters() {
			add(v.Name(), v)
		}
	case registry.TimeLimiter:
		for _, v := range h.reg.TimeLimiters() {
			add(v.Name(), v)
		}
	default:
		for _, k := range leveeKinds {
			if k.pattern == p {
				out = k.list(h.reg)
			}
		}
	}
	return out
}
