package registry

import (
	"github.com/levee-go/levee/async"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
	"github.com/levee-go/levee/timelimiter"
)

// SetCircuitBreakerConfig stores cfg as the shared circuit breaker config named name, replacing any of that
// name: DefaultConfigName for the default, another name for a base config that
// InstanceConfig.BaseConfig refers to, as Resilience4j's Registry.addConfiguration. It
// changes the configs of instances created later, never an existing instance. cfg is
// validated when an instance is created from it.
func (r *Registry) SetCircuitBreakerConfig(name string, cfg circuitbreaker.Config) {
	setShared(r, &r.cbc, name, cfg)
}

// CircuitBreakerConfig returns the shared circuit breaker config named name, as Resilience4j's
// Registry.getConfiguration.
func (r *Registry) CircuitBreakerConfig(name string) (circuitbreaker.Config, bool) {
	return sharedConfig(r, &r.cbc, name)
}

// ConfigureCircuitBreaker sets how the circuit breaker named name is made by CircuitBreaker(name) when it does not exist
// yet, replacing any earlier InstanceConfig of that name. It never changes an existing
// instance.
func (r *Registry) ConfigureCircuitBreaker(name string, ic InstanceConfig[circuitbreaker.Config]) {
	configure(r, &r.cbc, name, ic)
}

// CircuitBreakerConfigFor returns the config CircuitBreaker(name) would create the circuit breaker named name with: its
// InstanceConfig applied to its base, or the default config. The error is
// ErrConfigNotFound for a missing base config, or a panic of Tune.
func (r *Registry) CircuitBreakerConfigFor(name string) (circuitbreaker.Config, error) {
	return resolved(r, &r.cbc, CircuitBreaker, name)
}

// CircuitBreaker returns the circuit breaker named name, creating and registering it (an
// EntryAdded event) from the config CircuitBreakerConfigFor(name) gives when there is none, as Resilience4j's
// CircuitBreakerRegistry.circuitBreaker(name). Concurrent calls for one name return one
// instance. It may add to the registry, so a Subscribe callback must not call it for an
// absent name. Errors: ErrConfigNotFound, or the error of circuitbreaker.New for an invalid config
// (nothing is registered then).
func (r *Registry) CircuitBreaker(name string) (*circuitbreaker.CircuitBreaker, error) {
	return getOrCreate(r, &r.cbs, &r.cbc, CircuitBreaker, name, circuitbreaker.New)
}

// SetRetryConfig stores cfg as the shared retry config named name, replacing any of that
// name: DefaultConfigName for the default, another name for a base config that
// InstanceConfig.BaseConfig refers to, as Resilience4j's Registry.addConfiguration. It
// changes the configs of instances created later, never an existing instance. cfg is
// validated when an instance is created from it.
func (r *Registry) SetRetryConfig(name string, cfg retry.Config) {
	setShared(r, &r.rtc, name, cfg)
}

// RetryConfig returns the shared retry config named name, as Resilience4j's
// Registry.getConfiguration.
func (r *Registry) RetryConfig(name string) (retry.Config, bool) {
	return sharedConfig(r, &r.rtc, name)
}

// ConfigureRetry sets how the retry named name is made by Retry(name) when it does not exist
// yet, replacing any earlier InstanceConfig of that name. It never changes an existing
// instance.
func (r *Registry) ConfigureRetry(name string, ic InstanceConfig[retry.Config]) {
	configure(r, &r.rtc, name, ic)
}

// RetryConfigFor returns the config Retry(name) would create the retry named name with: its
// InstanceConfig applied to its base, or the default config. The error is
// ErrConfigNotFound for a missing base config, or a panic of Tune.
func (r *Registry) RetryConfigFor(name string) (retry.Config, error) {
	return resolved(r, &r.rtc, Retry, name)
}

// Retry returns the retry named name, creating and registering it (an
// EntryAdded event) from the config RetryConfigFor(name) gives when there is none, as Resilience4j's
// RetryRegistry.retry(name). Concurrent calls for one name return one
// instance. It may add to the registry, so a Subscribe callback must not call it for an
// absent name. Errors: ErrConfigNotFound, or the error of retry.New for an invalid config
// (nothing is registered then).
func (r *Registry) Retry(name string) (*retry.Retry, error) {
	return getOrCreate(r, &r.rts, &r.rtc, Retry, name, retry.New)
}

// SetBulkheadConfig stores cfg as the shared bulkhead config named name, replacing any of that
// name: DefaultConfigName for the default, another name for a base config that
// InstanceConfig.BaseConfig refers to, as Resilience4j's Registry.addConfiguration. It
// changes the configs of instances created later, never an existing instance. cfg is
// validated when an instance is created from it.
func (r *Registry) SetBulkheadConfig(name string, cfg bulkhead.Config) {
	setShared(r, &r.bhc, name, cfg)
}

// BulkheadConfig returns the shared bulkhead config named name, as Resilience4j's
// Registry.getConfiguration.
func (r *Registry) BulkheadConfig(name string) (bulkhead.Config, bool) {
	return sharedConfig(r, &r.bhc, name)
}

// ConfigureBulkhead sets how the bulkhead named name is made by Bulkhead(name) when it does not exist
// yet, replacing any earlier InstanceConfig of that name. It never changes an existing
// instance.
func (r *Registry) ConfigureBulkhead(name string, ic InstanceConfig[bulkhead.Config]) {
	configure(r, &r.bhc, name, ic)
}

// BulkheadConfigFor returns the config Bulkhead(name) would create the bulkhead named name with: its
// InstanceConfig applied to its base, or the default config. The error is
// ErrConfigNotFound for a missing base config, or a panic of Tune.
func (r *Registry) BulkheadConfigFor(name string) (bulkhead.Config, error) {
	return resolved(r, &r.bhc, Bulkhead, name)
}

// Bulkhead returns the bulkhead named name, creating and registering it (an
// EntryAdded event) from the config BulkheadConfigFor(name) gives when there is none, as Resilience4j's
// BulkheadRegistry.bulkhead(name). Concurrent calls for one name return one
// instance. It may add to the registry, so a Subscribe callback must not call it for an
// absent name. Errors: ErrConfigNotFound, or the error of bulkhead.New for an invalid config
// (nothing is registered then).
func (r *Registry) Bulkhead(name string) (*bulkhead.Bulkhead, error) {
	return getOrCreate(r, &r.bhs, &r.bhc, Bulkhead, name, bulkhead.New)
}

// SetWorkerPoolConfig stores cfg as the shared worker pool (thread-pool bulkhead) config named name, replacing any of that
// name: DefaultConfigName for the default, another name for a base config that
// InstanceConfig.BaseConfig refers to, as Resilience4j's Registry.addConfiguration. It
// changes the configs of instances created later, never an existing instance. cfg is
// validated when an instance is created from it.
func (r *Registry) SetWorkerPoolConfig(name string, cfg async.WorkerPoolConfig) {
	setShared(r, &r.wpc, name, cfg)
}

// WorkerPoolConfig returns the shared worker pool (thread-pool bulkhead) config named name, as Resilience4j's
// Registry.getConfiguration.
func (r *Registry) WorkerPoolConfig(name string) (async.WorkerPoolConfig, bool) {
	return sharedConfig(r, &r.wpc, name)
}

// ConfigureWorkerPool sets how the worker pool (thread-pool bulkhead) named name is made by WorkerPool(name) when it does not exist
// yet, replacing any earlier InstanceConfig of that name. It never changes an existing
// instance.
func (r *Registry) ConfigureWorkerPool(name string, ic InstanceConfig[async.WorkerPoolConfig]) {
	configure(r, &r.wpc, name, ic)
}

// WorkerPoolConfigFor returns the config WorkerPool(name) would create the worker pool (thread-pool bulkhead) named name with: its
// InstanceConfig applied to its base, or the default config. The error is
// ErrConfigNotFound for a missing base config, or a panic of Tune.
func (r *Registry) WorkerPoolConfigFor(name string) (async.WorkerPoolConfig, error) {
	return resolved(r, &r.wpc, WorkerPool, name)
}

// WorkerPool returns the worker pool (thread-pool bulkhead) named name, creating and registering it (an
// EntryAdded event) from the config WorkerPoolConfigFor(name) gives when there is none, as Resilience4j's
// ThreadPoolBulkheadRegistry.bulkhead(name). Concurrent calls for one name return one
// instance. It may add to the registry, so a Subscribe callback must not call it for an
// absent name. Errors: ErrConfigNotFound, or the error of async.NewWorkerPool for an invalid config
// (nothing is registered then). The registry never closes a pool: its owner does.
func (r *Registry) WorkerPool(name string) (*async.WorkerPool, error) {
	return getOrCreate(r, &r.wps, &r.wpc, WorkerPool, name, async.NewWorkerPool)
}

// SetRateLimiterConfig stores cfg as the shared rate limiter config named name, replacing any of that
// name: DefaultConfigName for the default, another name for a base config that
// InstanceConfig.BaseConfig refers to, as Resilience4j's Registry.addConfiguration. It
// changes the configs of instances created later, never an existing instance. cfg is
// validated when an instance is created from it.
func (r *Registry) SetRateLimiterConfig(name string, cfg ratelimiter.Config) {
	setShared(r, &r.rlc, name, cfg)
}

// RateLimiterConfig returns the shared rate limiter config named name, as Resilience4j's
// Registry.getConfiguration.
func (r *Registry) RateLimiterConfig(name string) (ratelimiter.Config, bool) {
	return sharedConfig(r, &r.rlc, name)
}

// ConfigureRateLimiter sets how the rate limiter named name is made by RateLimiter(name) when it does not exist
// yet, replacing any earlier InstanceConfig of that name. It never changes an existing
// instance.
func (r *Registry) ConfigureRateLimiter(name string, ic InstanceConfig[ratelimiter.Config]) {
	configure(r, &r.rlc, name, ic)
}

// RateLimiterConfigFor returns the config RateLimiter(name) would create the rate limiter named name with: its
// InstanceConfig applied to its base, or the default config. The error is
// ErrConfigNotFound for a missing base config, or a panic of Tune.
func (r *Registry) RateLimiterConfigFor(name string) (ratelimiter.Config, error) {
	return resolved(r, &r.rlc, RateLimiter, name)
}

// RateLimiter returns the rate limiter named name, creating and registering it (an
// EntryAdded event) from the config RateLimiterConfigFor(name) gives when there is none, as Resilience4j's
// RateLimiterRegistry.rateLimiter(name). Concurrent calls for one name return one
// instance. It may add to the registry, so a Subscribe callback must not call it for an
// absent name. Errors: ErrConfigNotFound, or the error of ratelimiter.New for an invalid config
// (nothing is registered then).
func (r *Registry) RateLimiter(name string) (*ratelimiter.RateLimiter, error) {
	return getOrCreate(r, &r.rls, &r.rlc, RateLimiter, name, ratelimiter.New)
}

// SetTimeLimiterConfig stores cfg as the shared time limiter config named name, replacing any of that
// name: DefaultConfigName for the default, another name for a base config that
// InstanceConfig.BaseConfig refers to, as Resilience4j's Registry.addConfiguration. It
// changes the configs of instances created later, never an existing instance. cfg is
// validated when an instance is created from it.
func (r *Registry) SetTimeLimiterConfig(name string, cfg timelimiter.Config) {
	setShared(r, &r.tlc, name, cfg)
}

// TimeLimiterConfig returns the shared time limiter config named name, as Resilience4j's
// Registry.getConfiguration.
func (r *Registry) TimeLimiterConfig(name string) (timelimiter.Config, bool) {
	return sharedConfig(r, &r.tlc, name)
}

// ConfigureTimeLimiter sets how the time limiter named name is made by TimeLimiter(name) when it does not exist
// yet, replacing any earlier InstanceConfig of that name. It never changes an existing
// instance.
func (r *Registry) ConfigureTimeLimiter(name string, ic InstanceConfig[timelimiter.Config]) {
	configure(r, &r.tlc, name, ic)
}

// TimeLimiterConfigFor returns the config TimeLimiter(name) would create the time limiter named name with: its
// InstanceConfig applied to its base, or the default config. The error is
// ErrConfigNotFound for a missing base config, or a panic of Tune.
func (r *Registry) TimeLimiterConfigFor(name string) (timelimiter.Config, error) {
	return resolved(r, &r.tlc, TimeLimiter, name)
}

// TimeLimiter returns the time limiter named name, creating and registering it (an
// EntryAdded event) from the config TimeLimiterConfigFor(name) gives when there is none, as Resilience4j's
// TimeLimiterRegistry.timeLimiter(name). Concurrent calls for one name return one
// instance. It may add to the registry, so a Subscribe callback must not call it for an
// absent name. Errors: ErrConfigNotFound, or the error of timelimiter.New for an invalid config
// (nothing is registered then).
func (r *Registry) TimeLimiter(name string) (*timelimiter.TimeLimiter, error) {
	return getOrCreate(r, &r.tls, &r.tlc, TimeLimiter, name, timelimiter.New)
}
