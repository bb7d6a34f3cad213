package leveestatus

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/levee-go/levee/registry"
)

// Defaults and bounds of the options.
const (
	// DefaultEventConsumerBufferSize is the number of events kept per instance, as
	// Resilience4j's eventConsumerBufferSize default.
	DefaultEventConsumerBufferSize = 100
	// MaxEventConsumerBufferSize bounds EventConsumerBufferSize.
	MaxEventConsumerBufferSize = 1 << 16
	// DefaultSnapshotInterval is how often the dashboard's stream sends a snapshot.
	DefaultSnapshotInterval = time.Second
	// MinSnapshotInterval and MaxSnapshotInterval bound SnapshotInterval.
	MinSnapshotInterval = 10 * time.Millisecond
	MaxSnapshotInterval = time.Hour
)

// ErrNilRegistry is returned by NewHandler for a nil *registry.Registry.
var ErrNilRegistry = errors.New("leveestatus: nil *registry.Registry")

// Option configures a Handler; pass them to NewHandler.
type Option func(*options)

type options struct {
	bufferSize   int
	bufferSizes  map[key]int
	healthOnly   map[string]bool // nil: every breaker is a health component
	interval     time.Duration
	allowFail    map[string]bool
	stateUpdates bool
}

// EventConsumerBufferSize sets how many events the handler keeps per instance for the
// event endpoints, in [1, MaxEventConsumerBufferSize] [DefaultEventConsumerBufferSize], as
// Resilience4j's eventConsumerBufferSize. The oldest event goes first when the ring is full.
func EventConsumerBufferSize(n int) Option { return func(o *options) { o.bufferSize = n } }

// InstanceEventConsumerBufferSize sets how many events of each type the handler keeps for the
// instance of pattern p named name, in [1, MaxEventConsumerBufferSize], over
// EventConsumerBufferSize, as the eventConsumerBufferSize key of one Resilience4j instance.
// It applies to an instance of that name whenever it is registered, a replacement included.
func InstanceEventConsumerBufferSize(p registry.Pattern, name string, n int) Option {
	return func(o *options) {
		if o.bufferSizes == nil {
			o.bufferSizes = map[key]int{}
		}
		o.bufferSizes[key{p, name}] = n
	}
}

// RegisterHealthIndicators makes GET /health list only the circuit breakers named, as
// Resilience4j's per-instance registerHealthIndicator: true (a breaker without it is no
// component of the health). Without this option every breaker is listed; with it, even with
// no name, only the breakers named are. Names add up over several calls.
func RegisterHealthIndicators(names ...string) Option {
	return func(o *options) {
		if o.healthOnly == nil {
			o.healthOnly = map[string]bool{}
		}
		for _, n := range names {
			o.healthOnly[n] = true
		}
	}
}

// SnapshotInterval sets how often GET /stream sends a snapshot of every instance, in
// [MinSnapshotInterval, MaxSnapshotInterval] [DefaultSnapshotInterval]. State transitions
// are sent at once, between snapshots.
func SnapshotInterval(d time.Duration) Option { return func(o *options) { o.interval = d } }

// AllowHealthIndicatorToFail makes GET /health report DOWN, with status 503, while one of the
// named circuit breakers is OPEN, as Resilience4j's allowHealthIndicatorToFail. Without it an
// OPEN breaker is CIRCUIT_OPEN and the health stays UP (200): a dependency's outage should
// not take the instance out of its load balancer. Names add up over several calls.
func AllowHealthIndicatorToFail(names ...string) Option {
	return func(o *options) {
		if o.allowFail == nil {
			o.allowFail = map[string]bool{}
		}
		for _, n := range names {
			o.allowFail[n] = true
		}
	}
}

// EnableStateUpdates lets POST /circuitbreakers/{name} change a breaker's state. Without it
// that request is answered 403 Forbidden. The handler authenticates nobody: mount it behind
// the application's own authentication and off the public port before enabling this.
func EnableStateUpdates() Option { return func(o *options) { o.stateUpdates = true } }

// Handler serves the status API, the health check and the dashboard of the instances of one
// registry.Registry. It is an http.Handler built on its own http.ServeMux; mount it under a
// prefix with http.StripPrefix. Make one with NewHandler and Close it when done: until then it
// is subscribed to the registry and to every instance in it.
type Handler struct {
	reg  *registry.Registry
	opts options
	mux  *http.ServeMux
	done chan struct{}

	mu       sync.Mutex // guards closed, watches and unsubReg
	closed   bool
	watches  map[key]*watch
	unsubReg func()

	streamsMu sync.Mutex
	streams   map[chan streamNote]struct{}
}

// key names an instance: pattern and name.
type key struct {
	p    registry.Pattern
	name string
}

// NewHandler returns a Handler serving reg's instances, subscribed to the events of every
// instance reg holds now and of every instance added later (and unsubscribed from removed
// ones), so that the event endpoints have the last events of each. The subscriptions cost
// each call a callback while the handler exists; Close removes them.
//
// It returns ErrNilRegistry for a nil reg, and an error naming the option and its allowed
// range for an option out of range.
func NewHandler(reg *registry.Registry, opts ...Option) (*Handler, error) {
	if reg == nil {
		return nil, ErrNilRegistry
	}
	o := options{bufferSize: DefaultEventConsumerBufferSize, interval: DefaultSnapshotInterval}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.bufferSize < 1 || o.bufferSize > MaxEventConsumerBufferSize {
		return nil, fmt.Errorf("leveestatus: EventConsumerBufferSize must be in [1, %d], got %d",
			MaxEventConsumerBufferSize, o.bufferSize)
	}
	for _, k := range slices.SortedFunc(maps.Keys(o.bufferSizes), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.p, b.p), cmp.Compare(a.name, b.name))
	}) {
		if n := o.bufferSizes[k]; n < 1 || n > MaxEventConsumerBufferSize {
			return nil, fmt.Errorf("leveestatus: InstanceEventConsumerBufferSize of %s %q must be in [1, %d], got %d",
				k.p, k.name, MaxEventConsumerBufferSize, n)
		}
	}
	if o.interval < MinSnapshotInterval || o.interval > MaxSnapshotInterval {
		return nil, fmt.Errorf("leveestatus: SnapshotInterval must be in [%v, %v], got %v",
			MinSnapshotInterval, MaxSnapshotInterval, o.interval)
	}
	h := &Handler{
		reg:     reg,
		opts:    o,
		done:    make(chan struct{}),
		watches: map[key]*watch{},
		streams: map[chan streamNote]struct{}{},
	}
	// Subscribe before listing, so that no instance added meanwhile is missed; watch
	// ignores an instance it already watches.
	unsub := reg.Subscribe(h.onRegistryEvent)
	for _, v := range reg.CircuitBreakers() {
		h.watch(true, registry.CircuitBreaker, v.Name(), v)
	}
	for _, v := range reg.Retries() {
		h.watch(true, registry.Retry, v.Name(), v)
	}
	for _, v := range reg.Bulkheads() {
		h.watch(true, registry.Bulkhead, v.Name(), v)
	}
	for _, v := range reg.WorkerPools() {
		h.watch(true, registry.WorkerPool, v.Name(), v)
	}
	for _, v := range reg.RateLimiters() {
		h.watch(true, registry.RateLimiter, v.Name(), v)
	}
	for _, v := range reg.TimeLimiters() {
		h.watch(true, registry.TimeLimiter, v.Name(), v)
	}
	h.mu.Lock()
	h.unsubReg = unsub
	h.mu.Unlock()
	h.mux = h.routes()
	return h, nil
}

// ServeHTTP serves the request; see the package documentation for the endpoints. After
// Close every request is answered 503 Service Unavailable.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case <-h.done:
		writeError(w, r, http.StatusServiceUnavailable, "leveestatus: handler closed")
		return
	default:
	}
	h.mux.ServeHTTP(w, r)
}

// Close unsubscribes the handler from the registry and from every instance, and ends every
// GET /stream response in progress. It is idempotent and always returns nil.
func (h *Handler) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	close(h.done)
	unsubReg := h.unsubReg
	ws := h.watches
	h.watches = map[key]*watch{}
	h.mu.Unlock()
	if unsubReg != nil {
		unsubReg()
	}
	for _, w := range ws {
		w.unsubscribe()
	}
	return nil
}

func (h *Handler) onRegistryEvent(e registry.Event) {
	switch e.Type {
	case registry.EntryAdded:
		h.watch(false, e.Pattern, e.Name, e.Instance)
	case registry.EntryReplaced:
		h.unwatch(e.Pattern, e.Name, e.Replaced)
		h.watch(false, e.Pattern, e.Name, e.Instance)
	case registry.EntryRemoved:
		h.unwatch(e.Pattern, e.Name, e.Instance)
	}
	h.notify(streamNote{})
}

// watch subscribes to inst unless it is watched already or the handler is closed. listed
// says that NewHandler found it in a list: then the registry may have removed it since, and
// delivered the removal before it was watched, so it is watched only if still registered.
func (h *Handler) watch(listed bool, p registry.Pattern, name string, inst any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := key{p, name}
	if h.closed {
		return
	}
	// Lock order: h.mu, then the registry's (which it never holds while it publishes).
	if listed && h.registered(p, name) != inst {
		return
	}
	if w, ok := h.watches[k]; ok && w.instance == inst {
		return
	}
	if old, ok := h.watches[k]; ok {
		old.unsubscribe()
	}
	size := h.opts.bufferSize
	if n, ok := h.opts.bufferSizes[k]; ok {
		size = n
	}
	h.watches[k] = newWatch(h, p, inst, size)
}

// registered returns the instance reg holds under p and name, or nil.
func (h *Handler) registered(p registry.Pattern, name string) any {
	var v any
	var ok bool
	switch p {
	case registry.CircuitBreaker:
		v, ok = h.reg.FindCircuitBreaker(name)
	case registry.Retry:
		v, ok = h.reg.FindRetry(name)
	case registry.Bulkhead:
		v, ok = h.reg.FindBulkhead(name)
	case registry.WorkerPool:
		v, ok = h.reg.FindWorkerPool(name)
	case registry.RateLimiter:
		v, ok = h.reg.FindRateLimiter(name)
	case registry.TimeLimiter:
		v, ok = h.reg.FindTimeLimiter(name)
	}
	if !ok {
		return nil
	}
	return v
}

// unwatch unsubscribes from inst if it is the instance watched under that name.
func (h *Handler) unwatch(p registry.Pattern, name string, inst any) {
	h.mu.Lock()
	k := key{p, name}
	w, ok := h.watches[k]
	if ok && w.instance == inst {
		delete(h.watches, k)
	} else {
		ok = false
	}
	h.mu.Unlock()
	if ok {
		w.unsubscribe()
	}
}

// watchOf returns the watch of the instance inst, nil when it has none (an instance added
// to the registry an instant ago, or a handler closed).
func (h *Handler) watchOf(p registry.Pattern, name string, inst any) *watch {
	h.mu.Lock()
	defer h.mu.Unlock()
	w := h.watches[key{p, name}]
	if w == nil || w.instance != inst {
		return nil
	}
	return w
}

// errorBody is the JSON of an error answer, as Spring's error attributes.
type errorBody struct {
	Status  int    `json:"status"`
	Error   string `json:"error"`
	Message string `json:"message"`
	Path    string `json:"path"`
}

func writeError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	writeJSON(w, status, errorBody{Status: status, Error: http.StatusText(status), Message: msg, Path: r.URL.Path})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil { // every value served is made of plain fields; kept for safety
		status = http.StatusInternalServerError
		b = []byte(`{"status":500,"error":"Internal Server Error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
