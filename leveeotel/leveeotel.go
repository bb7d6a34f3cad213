package leveeotel

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/registry"
)

// ScopeName is the name of the instrumentation scope of every instrument: the package's
// import path, as OpenTelemetry's guidelines for instrumentation libraries ask.
const ScopeName = "github.com/levee-go/levee/leveeotel"

// version is the release of this module; it moves with the module's tags.
const version = "0.1.0"

// Version returns the version of the instrumentation scope: this module's release, e.g.
// "0.1.0".
func Version() string { return version }

// DefaultBucketBoundaries returns the explicit bucket boundaries, in seconds, of the
// resilience4j.circuitbreaker.calls histogram: 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
// 2.5, 5 and 10, the Prometheus client's defaults. The SDK's own defaults (0, 5, 10, 25 …
// 10000) are meant for milliseconds and would put every call under 5 s in one bucket. A new
// slice each call.
func DefaultBucketBoundaries() []float64 {
	return []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
}

// Option configures New.
type Option func(*config)

type config struct {
	mp      metric.MeterProvider
	buckets []float64
	noCalls bool
}

// WithMeterProvider makes New create its meter from mp. Without it, or with a nil mp, New uses
// the global provider, otel.GetMeterProvider().
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.mp = mp }
}

// WithBucketBoundaries sets the explicit bucket boundaries, in seconds, of the
// resilience4j.circuitbreaker.calls histogram, in place of DefaultBucketBoundaries. New refuses
// boundaries that are not finite and strictly increasing. A View of the application's SDK can
// still override them.
func WithBucketBoundaries(seconds ...float64) Option {
	b := slices.Clone(seconds)
	return func(c *config) { c.buckets = b }
}

// WithoutCallsHistogram makes New create no resilience4j.circuitbreaker.calls histogram and
// subscribe to no breaker's per-call events, for an application that exports the histogram
// with NewCallsProducer instead: its calls then cost nothing more than unobserved ones (see
// "Cost" in the package documentation). The other instruments are unchanged.
func WithoutCallsHistogram() Option {
	return func(c *config) { c.noCalls = true }
}

// The attribute keys, as Resilience4j's Micrometer tags.
const (
	keyName  = "name"
	keyKind  = "kind"
	keyState = "state"
)

// Metrics publishes the metrics of a registry's instances through one meter. Create it with
// New, once per registry and MeterProvider, and stop it with Close. Every method is safe for
// concurrent use.
type Metrics struct {
	reg   *registry.Registry
	calls metric.Float64Histogram
	inst  instruments

	callback metric.Registration
	levee    *leveeInstruments
	leveeCB  metric.Registration
	unsubReg func()

	mu       sync.Mutex
	breakers map[*circuitbreaker.CircuitBreaker]*breaker
	closed   bool

	closeOnce sync.Once
	closeErr  error
}

// instruments are the observable instruments, read by one callback.
type instruments struct {
	cbState, cbBuffered, cbSlow   metric.Int64ObservableGauge
	cbNotPermitted                metric.Int64ObservableCounter
	cbFailureRate, cbSlowCallRate metric.Float64ObservableGauge
	retryCalls                    metric.Int64ObservableCounter
	bhAvailable, bhMaxAllowed     metric.Int64ObservableGauge
	wpQueueDepth, wpQueueCapacity metric.Int64ObservableGauge
	wpSize, wpMaxSize, wpCoreSize metric.Int64ObservableGauge
	wpActive, wpAvailable         metric.Int64ObservableGauge
	rlAvailable, rlWaiting        metric.Int64ObservableGauge
	tlCalls                       metric.Int64ObservableCounter
}

// New starts publishing the metrics of reg's instances, those registered now and those added
// later, until Close. It creates the meter ScopeName, version Version(), from the provider of
// WithMeterProvider (the global one by default), its instruments (see the package
// documentation), registers one callback for the observable ones, and subscribes to the events
// of every circuit breaker in reg and to reg's own events.
//
// It returns an error, and publishes nothing, for a nil reg, for bucket boundaries that are not
// finite and strictly increasing, and when the provider refuses an instrument or the callback.
func New(reg *registry.Registry, opts ...Option) (*Metrics, error) {
	if reg == nil {
		return nil, errors.New("leveeotel: nil *registry.Registry")
	}
	cfg := config{buckets: DefaultBucketBoundaries()}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if cfg.mp == nil {
		cfg.mp = otel.GetMeterProvider()
	}
	if err := checkBuckets(cfg.buckets); err != nil {
		return nil, err
	}
	meter := cfg.mp.Meter(ScopeName, metric.WithInstrumentationVersion(Version()))

	m := &Metrics{reg: reg, breakers: map[*circuitbreaker.CircuitBreaker]*breaker{}}
	var errs []error
	keep := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	gauge := func(name, description, unit string) metric.Int64ObservableGauge {
		g, err := meter.Int64ObservableGauge(name, metric.WithDescription(description), metric.WithUnit(unit))
		keep(err)
		return g
	}
	counter := func(name, description string) metric.Int64ObservableCounter {
		c, err := meter.Int64ObservableCounter(name, metric.WithDescription(description), metric.WithUnit("{call}"))
		keep(err)
		return c
	}
	rate := func(name, description string) metric.Float64ObservableGauge {
		g, err := meter.Float64ObservableGauge(name, metric.WithDescription(description))
		keep(err)
		return g
	}
	// The descriptions are Resilience4j's; where it describes each kind apart, the one of the
	// kind it registers first, which is what its Prometheus output shows as HELP.
	var err error
	if !cfg.noCalls {
		m.calls, err = meter.Float64Histogram(callsName,
			metric.WithDescription(callsDescription),
			metric.WithUnit("s"),
			metric.WithExplicitBucketBoundaries(cfg.buckets...))
		keep(err)
	}
	in := &m.inst
	in.cbState = gauge("resilience4j.circuitbreaker.state", "The states of the circuit breaker", "")
	in.cbNotPermitted = counter("resilience4j.circuitbreaker.not.permitted.calls", "Total number of not permitted calls")
	in.cbBuffered = gauge("resilience4j.circuitbreaker.buffered.calls", "The number of buffered failed calls stored in the ring buffer", "{call}")
	in.cbSlow = gauge("resilience4j.circuitbreaker.slow.calls", "The number of slow successful which were slower than a certain threshold", "{call}")
	in.cbFailureRate = rate("resilience4j.circuitbreaker.failure.rate", "The failure rate of the circuit breaker")
	in.cbSlowCallRate = rate("resilience4j.circuitbreaker.slow.call.rate", "The slow call of the circuit breaker")
	in.retryCalls = counter("resilience4j.retry.calls", "The number of successful calls without a retry attempt")
	in.bhAvailable = gauge("resilience4j.bulkhead.available.concurrent.calls", "The number of available permissions", "{call}")
	in.bhMaxAllowed = gauge("resilience4j.bulkhead.max.allowed.concurrent.calls", "The maximum number of available permissions", "{call}")
	in.wpQueueDepth = gauge("resilience4j.bulkhead.queue.depth", "The queue depth", "{task}")
	in.wpQueueCapacity = gauge("resilience4j.bulkhead.queue.capacity", "The queue capacity", "{task}")
	in.wpSize = gauge("resilience4j.bulkhead.thread.pool.size", "The thread pool size", "{goroutine}")
	in.wpMaxSize = gauge("resilience4j.bulkhead.max.thread.pool.size", "The maximum thread pool size", "{goroutine}")
	in.wpCoreSize = gauge("resilience4j.bulkhead.core.thread.pool.size", "The core thread pool size", "{goroutine}")
	in.wpActive = gauge("resilience4j.bulkhead.active.thread.count", "The number of active threads", "{goroutine}")
	in.wpAvailable = gauge("resilience4j.bulkhead.available.thread.count", "The number of available threads", "{goroutine}")
	in.rlAvailable = gauge("resilience4j.ratelimiter.available.permissions", "The number of available permissions", "{permission}")
	in.rlWaiting = gauge("resilience4j.ratelimiter.waiting_threads", "The number of waiting threads", "{goroutine}")
	in.tlCalls = counter("resilience4j.timelimiter.calls", "The number of successful calls")
	var leveeObservables []metric.Observable
	m.levee, leveeObservables = newLeveeInstruments(meter, keep)
	if len(errs) > 0 {
		return nil, fmt.Errorf("leveeotel: creating the instruments: %w", errors.Join(errs...))
	}

	m.callback, err = meter.RegisterCallback(m.observe,
		in.cbState, in.cbNotPermitted, in.cbBuffered, in.cbSlow, in.cbFailureRate, in.cbSlowCallRate,
		in.retryCalls, in.bhAvailable, in.bhMaxAllowed,
		in.wpQueueDepth, in.wpQueueCapacity, in.wpSize, in.wpMaxSize, in.wpCoreSize, in.wpActive, in.wpAvailable,
		in.rlAvailable, in.rlWaiting, in.tlCalls)
	if err != nil {
		return nil, fmt.Errorf("leveeotel: registering the callback: %w", err)
	}
	m.leveeCB, err = meter.RegisterCallback(m.observeLevee, leveeObservables...)
	if err != nil {
		_ = m.callback.Unregister()
		return nil, fmt.Errorf("leveeotel: registering the callback: %w", err)
	}

	// Subscribe before listing, and attach under m.mu in both paths, so that no breaker added
	// or removed meanwhile is missed or kept: an event for a change that the list already
	// shows waits for the list's attachments, then finds them done.
	m.mu.Lock()
	m.unsubReg = reg.Subscribe(m.onRegistryEvent)
	for _, cb := range reg.CircuitBreakers() {
		m.attachLocked(cb)
	}
	m.mu.Unlock()
	return m, nil
}

func checkBuckets(b []float64) error {
	ok := len(b) > 0
	for i, v := range b {
		if math.IsNaN(v) || math.IsInf(v, 0) || (i > 0 && v <= b[i-1]) {
			ok = false
		}
	}
	if !ok {
		return fmt.Errorf("leveeotel: BucketBoundaries must be one or more finite numbers of seconds in strictly increasing order, got %v", b)
	}
	return nil
}

// Close stops publishing: it unregisters the callback of the observable instruments (the next
// collections report nothing from this Metrics) and every subscription to the registry's and the
// breakers' events (no more calls are recorded). It returns the error of unregistering the
// callback, if any. Later calls wait for the first to finish and return its error. A nil m does
// nothing.
func (m *Metrics) Close() error {
	if m == nil {
		return nil
	}
	m.closeOnce.Do(func() {
		m.mu.Lock()
		m.closed = true // registry events still under way attach nothing more
		m.mu.Unlock()

		// Neither is called under m.mu: the SDK calls observe, and the registry calls
		// onRegistryEvent, with their own locks held, and both take m.mu.
		if err := errors.Join(m.callback.Unregister(), m.leveeCB.Unregister()); err != nil {
			m.closeErr = fmt.Errorf("leveeotel: unregistering the callback: %w", err)
		}
		m.unsubReg()

		m.mu.Lock()
		for cb, b := range m.breakers {
			b.unsubscribe()
			delete(m.breakers, cb)
		}
		m.mu.Unlock()
	})
	return m.closeErr
}

// onRegistryEvent keeps the breakers' subscriptions in step with the registry.
func (m *Metrics) onRegistryEvent(e registry.Event) {
	if e.Pattern != registry.CircuitBreaker {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	switch e.Type {
	case registry.EntryAdded:
		if cb, ok := e.Instance.(*circuitbreaker.CircuitBreaker); ok {
			m.attachLocked(cb)
		}
	case registry.EntryRemoved:
		if cb, ok := e.Instance.(*circuitbreaker.CircuitBreaker); ok {
			m.detachLocked(cb)
		}
	case registry.EntryReplaced:
		if e.Replaced == e.Instance {
			return // the instance replaced itself: keep its subscription and count
		}
		if cb, ok := e.Replaced.(*circuitbreaker.CircuitBreaker); ok {
			m.detachLocked(cb)
		}
		if cb, ok := e.Instance.(*circuitbreaker.CircuitBreaker); ok {
			m.attachLocked(cb)
		}
	}
}

func (m *Metrics) attachLocked(cb *circuitbreaker.CircuitBreaker) {
	if cb == nil || m.breakers[cb] != nil {
		return
	}
	b := &breaker{m: m, name: cb.Name()}
	b.attrs.Store(newCallAttrs(b.name, m.reg.Tags(registry.CircuitBreaker, b.name)))
	b.tagsRead.Store(time.Now().UnixNano())
	if m.calls == nil { // WithoutCallsHistogram: the refusals only, no per-call event
		b.unsubscribe = cb.SubscribeTypes(b.onEvent, circuitbreaker.EventNotPermitted)
	} else {
		b.unsubscribe = cb.Subscribe(b.onEvent)
	}
	m.breakers[cb] = b
}

func (m *Metrics) detachLocked(cb *circuitbreaker.CircuitBreaker) {
	if b := m.breakers[cb]; b != nil {
		b.unsubscribe()
		delete(m.breakers, cb)
	}
}

// breaker is the state kept for one attached circuit breaker.
type breaker struct {
	m            *Metrics
	name         string
	unsubscribe  func()
	notPermitted atomic.Int64
	attrs        atomic.Pointer[callAttrs]
	tagsRead     atomic.Int64 // when the tags were last read for attrs, in Unix nanoseconds
}

// tagsRefresh is how often the tags of a breaker that has some are read again for its
// histogram attributes; an untagged breaker's are read on every call, which costs no
// allocation.
const tagsRefresh = time.Second

// callAttrs are the histogram's attribute options for one set of tags, built once. Each is a
// slice of one option so that Record takes it without allocating.
type callAttrs struct {
	tags                        map[string]string
	successful, failed, ignored []metric.RecordOption
}

func newCallAttrs(name string, tags map[string]string) *callAttrs {
	opt := func(kind string) []metric.RecordOption {
		return []metric.RecordOption{metric.WithAttributeSet(attrSet(name, tags, attribute.String(keyKind, kind)))}
	}
	return &callAttrs{tags: tags, successful: opt("successful"), failed: opt("failed"), ignored: opt("ignored")}
}

// onEvent records one event of the breaker: a call's duration or a refusal. It runs on the
// goroutine of the call, so it takes no lock of its own and, in the steady state, allocates
// nothing: the attribute options are rebuilt only when the instance's tags have changed, which
// is checked on every call while it has none (so tags set just after AddCircuitBreaker apply to
// the first call) and at most once per tagsRefresh once it has some.
func (b *breaker) onEvent(e circuitbreaker.Event) {
	switch e.Type {
	case circuitbreaker.EventNotPermitted:
		b.notPermitted.Add(1)
		return
	case circuitbreaker.EventSuccess, circuitbreaker.EventError, circuitbreaker.EventIgnoredError:
	default:
		return
	}
	a := b.attrs.Load()
	now := e.Time.UnixNano()
	if last := b.tagsRead.Load(); len(a.tags) == 0 || (now-last >= int64(tagsRefresh) && b.tagsRead.CompareAndSwap(last, now)) {
		if tags := b.m.reg.Tags(registry.CircuitBreaker, b.name); !maps.Equal(tags, a.tags) {
			a = newCallAttrs(b.name, tags)
			b.attrs.Store(a)
			b.tagsRead.Store(now)
		}
	}
	opts := a.successful
	switch e.Type {
	case circuitbreaker.EventError:
		opts = a.failed
	case circuitbreaker.EventIgnoredError:
		opts = a.ignored
	}
	b.m.calls.Record(context.Background(), e.Duration.Seconds(), opts...)
}

// attrSet returns the attributes name=name, the tags (less the reserved keys) and extra.
func attrSet(name string, tags map[string]string, extra ...attribute.KeyValue) attribute.Set {
	kvs := make([]attribute.KeyValue, 0, 1+len(tags)+len(extra))
	kvs = append(kvs, attribute.String(keyName, name))
	for k, v := range tags {
		if k == keyName || k == keyKind || k == keyState {
			continue
		}
		kvs = append(kvs, attribute.String(k, v))
	}
	kvs = append(kvs, extra...)
	return attribute.NewSet(kvs...)
}
