package leveeotel

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/registry"
)

// breakerStates are the states of the state gauge, with Resilience4j's lower-case names.
var breakerStates = [...]struct {
	state circuitbreaker.State
	name  string
}{
	{circuitbreaker.Closed, "closed"},
	{circuitbreaker.Open, "open"},
	{circuitbreaker.HalfOpen, "half_open"},
	{circuitbreaker.Disabled, "disabled"},
	{circuitbreaker.ForcedOpen, "forced_open"},
	{circuitbreaker.MetricsOnly, "metrics_only"},
}

// observe is the callback of every observable instrument: it reads each instance's snapshot
// at collection time.
func (m *Metrics) observe(_ context.Context, o metric.Observer) error {
	in := &m.inst
	reg := m.reg
	with := func(p registry.Pattern, name string, extra ...attribute.KeyValue) metric.ObserveOption {
		return metric.WithAttributeSet(attrSet(name, reg.Tags(p, name), extra...))
	}
	kind := func(k string) attribute.KeyValue { return attribute.String(keyKind, k) }

	for _, cb := range reg.CircuitBreakers() {
		name := cb.Name()
		s := cb.Metrics()
		for _, st := range breakerStates {
			var v int64
			if s.State == st.state {
				v = 1
			}
			o.ObserveInt64(in.cbState, v, with(registry.CircuitBreaker, name, attribute.String(keyState, st.name)))
		}
		o.ObserveInt64(in.cbBuffered, int64(s.NumberOfSuccessfulCalls), with(registry.CircuitBreaker, name, kind("successful")))
		o.ObserveInt64(in.cbBuffered, int64(s.NumberOfFailedCalls), with(registry.CircuitBreaker, name, kind("failed")))
		o.ObserveInt64(in.cbSlow, int64(s.NumberOfSlowSuccessfulCalls), with(registry.CircuitBreaker, name, kind("successful")))
		o.ObserveInt64(in.cbSlow, int64(s.NumberOfSlowFailedCalls), with(registry.CircuitBreaker, name, kind("failed")))
		o.ObserveFloat64(in.cbFailureRate, float64(s.FailureRate), with(registry.CircuitBreaker, name))
		o.ObserveFloat64(in.cbSlowCallRate, float64(s.SlowCallRate), with(registry.CircuitBreaker, name))
		m.mu.Lock()
		b := m.breakers[cb]
		m.mu.Unlock()
		if b != nil {
			o.ObserveInt64(in.cbNotPermitted, b.notPermitted.Load(), with(registry.CircuitBreaker, name, kind("not_permitted")))
		}
	}
	for _, r := range reg.Retries() {
		name := r.Name()
		s := r.Metrics()
		o.ObserveInt64(in.retryCalls, s.NumberOfSuccessfulCallsWithoutRetryAttempt, with(registry.Retry, name, kind("successful_without_retry")))
		o.ObserveInt64(in.retryCalls, s.NumberOfSuccessfulCallsWithRetryAttempt, with(registry.Retry, name, kind("successful_with_retry")))
		o.ObserveInt64(in.retryCalls, s.NumberOfFailedCallsWithoutRetryAttempt, with(registry.Retry, name, kind("failed_without_retry")))
		o.ObserveInt64(in.retryCalls, s.NumberOfFailedCallsWithRetryAttempt, with(registry.Retry, name, kind("failed_with_retry")))
	}
	for _, bh := range reg.Bulkheads() {
		name := bh.Name()
		s := bh.Metrics()
		o.ObserveInt64(in.bhAvailable, int64(s.AvailableConcurrentCalls), with(registry.Bulkhead, name))
		o.ObserveInt64(in.bhMaxAllowed, int64(s.MaxAllowedConcurrentCalls), with(registry.Bulkhead, name))
	}
	for _, wp := range reg.WorkerPools() {
		name := wp.Name()
		s := wp.Metrics()
		o.ObserveInt64(in.wpQueueDepth, int64(s.QueueDepth), with(registry.WorkerPool, name))
		o.ObserveInt64(in.wpQueueCapacity, int64(s.QueueCapacity), with(registry.WorkerPool, name))
		o.ObserveInt64(in.wpSize, int64(s.ThreadPoolSize), with(registry.WorkerPool, name))
		o.ObserveInt64(in.wpMaxSize, int64(s.MaximumThreadPoolSize), with(registry.WorkerPool, name))
		o.ObserveInt64(in.wpCoreSize, int64(s.CoreThreadPoolSize), with(registry.WorkerPool, name))
		o.ObserveInt64(in.wpActive, int64(s.ActiveThreadCount), with(registry.WorkerPool, name))
		o.ObserveInt64(in.wpAvailable, int64(s.AvailableThreadCount), with(registry.WorkerPool, name))
	}
	for _, rl := range reg.RateLimiters() {
		name := rl.Name()
		s := rl.Metrics()
		o.ObserveInt64(in.rlAvailable, int64(s.AvailablePermissions), with(registry.RateLimiter, name))
		o.ObserveInt64(in.rlWaiting, int64(s.NumberOfWaitingCalls), with(registry.RateLimiter, name))
	}
	for _, tl := range reg.TimeLimiters() {
		name := tl.Name()
		s := tl.Metrics()
		o.ObserveInt64(in.tlCalls, s.NumberOfSuccessfulCalls, with(registry.TimeLimiter, name, kind("successful")))
		o.ObserveInt64(in.tlCalls, s.NumberOfFailedCalls, with(registry.TimeLimiter, name, kind("failed")))
		o.ObserveInt64(in.tlCalls, s.NumberOfTimedOutCalls, with(registry.TimeLimiter, name, kind("timeout")))
	}
	return nil
}
