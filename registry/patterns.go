package registry

import (
	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

// AddCircuitBreaker registers v under its name. Adding the instance already registered under that name
// is a no-op; another instance of the same name is refused with ErrDuplicate (use
// ReplaceCircuitBreaker). A nil v is refused with an error.
func (r *Registry) AddCircuitBreaker(v *circuitbreaker.CircuitBreaker) error {
	return add(r, &r.cbs, CircuitBreaker, v, v == nil)
}

// ReplaceCircuitBreaker registers v under its name in place of any instance of that name, which it
// returns with true, as Resilience4j's Registry.replace. A nil v is refused with an error.
func (r *Registry) ReplaceCircuitBreaker(v *circuitbreaker.CircuitBreaker) (replaced *circuitbreaker.CircuitBreaker, ok bool, err error) {
	return replace(r, &r.cbs, CircuitBreaker, v, v == nil)
}

// RemoveCircuitBreaker unregisters the circuit breaker named name, with its tags, and returns it with true;
// nil and false when there is none.
func (r *Registry) RemoveCircuitBreaker(name string) (*circuitbreaker.CircuitBreaker, bool) {
	return remove(r, &r.cbs, CircuitBreaker, name)
}

// FindCircuitBreaker returns the circuit breaker named name, as Resilience4j's Registry.find.
func (r *Registry) FindCircuitBreaker(name string) (*circuitbreaker.CircuitBreaker, bool) {
	return find(r, &r.cbs, name)
}

// CircuitBreakers returns every registered circuit breaker, sorted by name: a new slice each call.
func (r *Registry) CircuitBreakers() []*circuitbreaker.CircuitBreaker {
	return list(r, &r.cbs)
}

// AddRetry registers v under its name. Adding the instance already registered under that name
// is a no-op; another instance of the same name is refused with ErrDuplicate (use
// ReplaceRetry). A nil v is refused with an error.
func (r *Registry) AddRetry(v *retry.Retry) error {
	return add(r, &r.rts, Retry, v, v == nil)
}

// ReplaceRetry registers v under its name in place of any instance of that name, which it
// returns with true, as Resilience4j's Registry.replace. A nil v is refused with an error.
func (r *Registry) ReplaceRetry(v *retry.Retry) (replaced *retry.Retry, ok bool, err error) {
	return replace(r, &r.rts, Retry, v, v == nil)
}

// RemoveRetry unregisters the retry named name, with its tags, and returns it with true;
// nil and false when there is none.
func (r *Registry) RemoveRetry(name string) (*retry.Retry, bool) {
	return remove(r, &r.rts, Retry, name)
}

// FindRetry returns the retry named name, as Resilience4j's Registry.find.
func (r *Registry) FindRetry(name string) (*retry.Retry, bool) {
	return find(r, &r.rts, name)
}

// Retries returns every registered retry, sorted by name: a new slice each call.
func (r *Registry) Retries() []*retry.Retry {
	return list(r, &r.rts)
}

// AddBulkhead registers v under its name. Adding the instance already registered under that name
// is a no-op; another instance of the same name is refused with ErrDuplicate (use
// ReplaceBulkhead). A nil v is refused with an error.
func (r *Registry) AddBulkhead(v *bulkhead.Bulkhead) error {
	return add(r, &r.bhs, Bulkhead, v, v == nil)
}

// ReplaceBulkhead registers v under its name in place of any instance of that name, which it
// returns with true, as Resilience4j's Registry.replace. A nil v is refused with an error.
func (r *Registry) ReplaceBulkhead(v *bulkhead.Bulkhead) (replaced *bulkhead.Bulkhead, ok bool, err error) {
	return replace(r, &r.bhs, Bulkhead, v, v == nil)
}

// RemoveBulkhead unregisters the bulkhead named name, with its tags, and returns it with true;
// nil and false when there is none.
func (r *Registry) RemoveBulkhead(name string) (*bulkhead.Bulkhead, bool) {
	return remove(r, &r.bhs, Bulkhead, name)
}

// FindBulkhead returns the bulkhead named name, as Resilience4j's Registry.find.
func (r *Registry) FindBulkhead(name string) (*bulkhead.Bulkhead, bool) {
	return find(r, &r.bhs, name)
}

// Bulkheads returns every registered bulkhead, sorted by name: a new slice each call.
func (r *Registry) Bulkheads() []*bulkhead.Bulkhead {
	return list(r, &r.bhs)
}

// AddWorkerPool registers v under its name. Adding the instance already registered under that name
// is a no-op; another instance of the same name is refused with ErrDuplicate (use
// ReplaceWorkerPool). A nil v is refused with an error.
func (r *Registry) AddWorkerPool(v *async.WorkerPool) error {
	return add(r, &r.wps, WorkerPool, v, v == nil)
}

// ReplaceWorkerPool registers v under its name in place of any instance of that name, which it
// returns with true, as Resilience4j's Registry.replace. A nil v is refused with an error.
func (r *Registry) ReplaceWorkerPool(v *async.WorkerPool) (replaced *async.WorkerPool, ok bool, err error) {
	return replace(r, &r.wps, WorkerPool, v, v == nil)
}

// RemoveWorkerPool unregisters the worker pool (thread-pool bulkhead) named name, with its tags, and returns it with true;
// nil and false when there is none.
func (r *Registry) RemoveWorkerPool(name string) (*async.WorkerPool, bool) {
	return remove(r, &r.wps, WorkerPool, name)
}

// FindWorkerPool returns the worker pool (thread-pool bulkhead) named name, as Resilience4j's Registry.find.
func (r *Registry) FindWorkerPool(name string) (*async.WorkerPool, bool) {
	return find(r, &r.wps, name)
}

// WorkerPools returns every registered worker pool (thread-pool bulkhead), sorted by name: a new slice each call.
func (r *Registry) WorkerPools() []*async.WorkerPool {
	return list(r, &r.wps)
}

// AddRateLimiter registers v under its name. Adding the instance already registered under that name
// is a no-op; another instance of the same name is refused with ErrDuplicate (use
// ReplaceRateLimiter). A nil v is refused with an error.
func (r *Registry) AddRateLimiter(v *ratelimiter.RateLimiter) error {
	return add(r, &r.rls, RateLimiter, v, v == nil)
}

// ReplaceRateLimiter registers v under its name in place of any instance of that name, which it
// returns with true, as Resilience4j's Registry.replace. A nil v is refused with an error.
func (r *Registry) ReplaceRateLimiter(v *ratelimiter.RateLimiter) (replaced *ratelimiter.RateLimiter, ok bool, err error) {
	return replace(r, &r.rls, RateLimiter, v, v == nil)
}

// RemoveRateLimiter unregisters the rate limiter named name, with its tags, and returns it with true;
// nil and false when there is none.
func (r *Registry) RemoveRateLimiter(name string) (*ratelimiter.RateLimiter, bool) {
	return remove(r, &r.rls, RateLimiter, name)
}

// FindRateLimiter returns the rate limiter named name, as Resilience4j's Registry.find.
func (r *Registry) FindRateLimiter(name string) (*ratelimiter.RateLimiter, bool) {
	return find(r, &r.rls, name)
}

// RateLimiters returns every registered rate limiter, sorted by name: a new slice each call.
func (r *Registry) RateLimiters() []*ratelimiter.RateLimiter {
	return list(r, &r.rls)
}

// AddTimeLimiter registers v under its name. Adding the instance already registered under that name
// is a no-op; another instance of the same name is refused with ErrDuplicate (use
// ReplaceTimeLimiter). A nil v is refused with an error.
func (r *Registry) AddTimeLimiter(v *timelimiter.TimeLimiter) error {
	return add(r, &r.tls, TimeLimiter, v, v == nil)
}

// ReplaceTimeLimiter registers v under its name in place of any instance of that name, which it
// returns with true, as Resilience4j's Registry.replace. A nil v is refused with an error.
func (r *Registry) ReplaceTimeLimiter(v *timelimiter.TimeLimiter) (replaced *timelimiter.TimeLimiter, ok bool, err error) {
	return replace(r, &r.tls, TimeLimiter, v, v == nil)
}

// RemoveTimeLimiter unregisters the time limiter named name, with its tags, and returns it with true;
// nil and false when there is none.
func (r *Registry) RemoveTimeLimiter(name string) (*timelimiter.TimeLimiter, bool) {
	return remove(r, &r.tls, TimeLimiter, name)
}

// FindTimeLimiter returns the time limiter named name, as Resilience4j's Registry.find.
func (r *Registry) FindTimeLimiter(name string) (*timelimiter.TimeLimiter, bool) {
	return find(r, &r.tls, name)
}

// TimeLimiters returns every registered time limiter, sorted by name: a new slice each call.
func (r *Registry) TimeLimiters() []*timelimiter.TimeLimiter {
	return list(r, &r.tls)
}
