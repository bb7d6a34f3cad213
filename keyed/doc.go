// Package keyed holds one instance per key — a circuit breaker per downstream host, an
// adaptive limiter or a bulkhead per tenant — with bounded memory: instances are created on a
// key's first Get and evicted when they would otherwise pile up, the least recently used one
// beyond MaxKeys and any one unused for IdleTimeout.
//
//	breakers, err := keyed.New(keyed.Config{MaxKeys: 1000, IdleTimeout: 5 * time.Minute},
//		func(host string) (*circuitbreaker.CircuitBreaker, error) {
//			return circuitbreaker.New(host, cfg)
//		})
//	...
//	cb, err := breakers.Get(req.URL.Host)
//	resp, err := circuitbreaker.Execute(ctx, cb, send)
//
// Get is get-or-create: the creation function runs once per key however many goroutines ask
// for it at the same time, a failed creation is not kept, and getting a key that exists takes
// no lock and allocates nothing. Idle keys are evicted lazily, at the next access (Get,
// Remove, All, Metrics, CountBy), so no goroutine of its own runs and there is nothing to close;
// EvictIdle evicts them on demand, for instance from a ticker of your own. Subscribe receives
// every eviction with the key, the instance and the Cause (CAPACITY, IDLE, REMOVED), to
// unsubscribe the instance's consumers or take it out of a registry.
//
// Eviction never drops protection: a circuit breaker that is OPEN, HALF_OPEN or FORCED_OPEN,
// an adaptive limiter with callers in its queue, a bulkhead with calls in flight or callers
// waiting, or any instance whose Protecting method reports true stays however idle or old it
// is, since a fresh instance in its place would let the calls through to a failing
// dependency, or more calls than the bulkhead's MaxConcurrentCalls to the key. When MaxKeys keys are held and all of them
// protect, Get refuses a new key with an *AllKeysProtectedError (a levee rejection) instead
// of growing or evicting; it never hands out a shared fallback instance, whose state would
// mix dependencies. An exporter that keeps series per instance removes them on the
// evictions Subscribe delivers.
//
// Metrics are kept for the set, never per key: Metrics counts keys, hits, misses, creations and
// evictions by cause, CountBy counts instances per label of your choice, and
// CircuitBreakerStates counts breakers per state, so that a metrics backend gets a bounded set
// of series (six, for the states) however many keys come and go. Per-key series with
// unbounded keys are the classic way to exhaust a Prometheus server.
//
// # Differences from Resilience4j
//
// Resilience4j's registries hold named instances created on first use too
// (CircuitBreakerRegistry.circuitBreaker(name)), but never evict them: one instance per
// tenant or host grows without bound. Package registry is levee's counterpart of those named
// registries; keyed is for keys that come and go.
package keyed
