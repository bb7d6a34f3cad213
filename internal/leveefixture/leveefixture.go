// Package leveefixture fills a registry with one instance of each of levee's own patterns
// (adaptive limiters, a partitioned and a keyed limiter, a prioritizer, a throttler, a keyed
// family of circuit breakers, and a shared rate limiter and circuit breaker), in a state fixed
// to the last figure, so that the exporters of the registry (leveeprom, leveeotel and
// leveestatus) can each compare what they publish with a golden file of the same scenario.
//
// It is for tests only and uses only the standard library: failures are reported through a
// testing.TB.
package leveefixture

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/keyed"
	"github.com/levee-go/levee/priority"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/throttle"
)

// StoreLimiter is a shared rate limiter named "partner" whose metrics are fixed: 40 calls
// permitted, 7 refused (2 of them by the store), degraded to its local fallback of 6 permits
// per period, on replica "host-a:12" of 3.
type StoreLimiter struct{}

// Name returns "partner".
func (StoreLimiter) Name() string { return "partner" }

// StoreLimiterMetrics returns the fixed figures of the shared rate limiter.
func (StoreLimiter) StoreLimiterMetrics() registry.StoreLimiterMetrics {
	return registry.StoreLimiterMetrics{
		Permitted: 40, Refused: 7, StoreRefused: 2, LocalPermitted: 5, LocalRefused: 3,
		StoreFailures: 4, BreakerRejections: 9, Episodes: 1, Degraded: true, Replicas: 3,
		Replica: "host-a:12", LimitForPeriod: 20, FallbackLimitForPeriod: 6,
		AvailablePermissions: -1, NumberOfWaitingCalls: 2,
	}
}

// StoreBreaker is a shared circuit breaker named "payments" whose metrics are fixed: open at
// version 7, published by "host-b:34" and seen from replica "host-a:12".
type StoreBreaker struct{}

// Name returns "payments".
func (StoreBreaker) Name() string { return "payments" }

// StoreBreakerMetrics returns the fixed figures of the shared circuit breaker.
func (StoreBreaker) StoreBreakerMetrics() registry.StoreBreakerMetrics {
	return registry.StoreBreakerMetrics{
		State: circuitbreaker.Open, Version: 7, Origin: "host-b:34", Replica: "host-a:12",
		Published: 2, Adopted: 5, Conflicts: 1, StoreErrors: 3, LocalDecisions: 1, TrialRefusals: 4,
		StoreAvailable: true,
	}
}

// FixedLimit returns the configuration of an adaptive limiter whose limit stays n: its
// initial, minimum and maximum limits are all n.
func FixedLimit(n int) adaptive.Config {
	return adaptive.Config{InitialLimit: n, MinLimit: n, MaxLimit: n}
}

// Populate fills reg with one instance of each of levee's own patterns and returns the
// function that ends the calls still held; the caller defers it. It must run inside a
// synctest bubble (testing/synctest.Test): it sleeps on the bubble's clock and waits for the
// calls it queues to block. Any failure stops the test with t.Fatal.
//
// The scenario, pattern by pattern:
//   - adaptive limiter "api", limit 2: two calls hold a permit, a third is rejected;
//   - adaptive limiter "search" (Gradient2, limit 4) after one call of 10ms;
//   - partitioned limiter "tenants", limit 2, partitions live 0.9 and batch 0.1: live holds 2,
//     batch 1 (its share, past the limit), and batch's second is rejected;
//   - keyed limiter "users", limit 2 per key and one key at most: a holds both, b is one key
//     too many, a's third is past its share;
//   - prioritizer "service" over limiter "queue" (limit 2, a queue of 10): two normal calls
//     (level 250) hold permits, three wait, and after a calibration (rate 0.5) a sheddable
//     call is shed;
//   - throttler "inventory" after 4 rejections by the backend: probability
//     (4 − 2×0)/(4+1) = 0.8, and the fifth call (random 0.75) is throttled;
//   - keyed family "hosts" of circuit breakers, 2 keys at most, series per key: a is forced
//     open, c's creation evicts b, and a is got again;
//   - the shared patterns StoreLimiter and StoreBreaker.
func Populate(t testing.TB, reg *registry.Registry) (release func()) {
	t.Helper()
	ctx := context.Background()
	var held []adaptive.Permit
	take := func(p adaptive.Permit, err error) {
		t.Helper()
		noError(t, err)
		held = append(held, p)
	}

	// An adaptive limiter of 2: two calls hold a permit, a third is rejected.
	al, err := adaptive.New("api", FixedLimit(2))
	noError(t, err)
	noError(t, reg.AddAdaptiveLimiter(al))
	take(al.Acquire(ctx))
	take(al.Acquire(ctx))
	_, err = al.Acquire(ctx)
	errorIs(t, err, adaptive.ErrLimitExceeded)

	// Gradient2 after one call of 10ms.
	g2cfg := FixedLimit(4)
	g2cfg.Algorithm = adaptive.Gradient2
	g2, err := adaptive.New("search", g2cfg)
	noError(t, err)
	noError(t, reg.AddAdaptiveLimiter(g2))
	pm, err := g2.Acquire(ctx)
	noError(t, err)
	time.Sleep(10 * time.Millisecond)
	pm.OnSuccess()

	// Partitions live 0.9 and batch 0.1 of a limit of 2: live takes 2, batch 1 (its share,
	// past the limit), and batch's second is rejected.
	pl, err := adaptive.NewPartitioned("tenants", adaptive.PartitionedConfig{
		Config:     FixedLimit(2),
		Partitions: []adaptive.Partition{{Name: "live", Share: 0.9}, {Name: "batch", Share: 0.1}},
	})
	noError(t, err)
	noError(t, reg.AddPartitionedLimiter(pl))
	take(pl.AcquirePartition(ctx, "live"))
	take(pl.AcquirePartition(ctx, "live"))
	take(pl.AcquirePartition(ctx, "batch"))
	_, err = pl.AcquirePartition(ctx, "batch")
	errorIs(t, err, adaptive.ErrLimitExceeded)

	// A limit of 2 per key, one key at most: a takes both, b is one key too many, a's third
	// is past its share.
	kl, err := adaptive.NewKeyed("users", adaptive.KeyedConfig{Config: FixedLimit(2), MaxKeys: 1})
	noError(t, err)
	noError(t, reg.AddPartitionedLimiter(kl))
	take(kl.AcquirePartition(ctx, "a"))
	take(kl.AcquirePartition(ctx, "a"))
	_, err = kl.AcquirePartition(ctx, "b")
	errorIs(t, err, adaptive.ErrLimitExceeded)
	_, err = kl.AcquirePartition(ctx, "a")
	errorIs(t, err, adaptive.ErrLimitExceeded)

	// A prioritizer over a limit of 2 with a queue: two normal calls hold permits, three wait,
	// and after a calibration (rate 0.5) a sheddable call is shed.
	qcfg := FixedLimit(2)
	qcfg.MaxQueued, qcfg.MaxWaitDuration = 10, time.Hour
	ql, err := adaptive.New("queue", qcfg)
	noError(t, err)
	pr, err := adaptive.NewPrioritizer("service", adaptive.PrioritizerConfig{CalibrationInterval: time.Second})
	noError(t, err)
	pr.Register(ql)
	noError(t, reg.AddPrioritizer(pr))
	normal := priority.WithLevel(ctx, 250)
	for range 2 {
		take(pr.Acquire(normal, ql))
	}
	done := make(chan struct{}, 3)
	for range 3 {
		go func() {
			if pm, err := pr.Acquire(normal, ql); err == nil {
				pm.OnIgnore()
			}
			done <- struct{}{}
		}()
	}
	synctest.Wait()
	time.Sleep(time.Second)
	_, err = pr.Acquire(priority.WithPriority(ctx, priority.Sheddable), ql)
	errorIs(t, err, adaptive.ErrShed)

	// A throttler after 4 rejections by the backend: probability (4 − 2×0)/(4+1) = 0.8, and
	// the fifth call (random 0.75, which the fourth passed at 3/4) is throttled.
	th, err := throttle.New("inventory", throttle.Config{Random: func() float64 { return 0.75 }})
	noError(t, err)
	noError(t, reg.AddThrottler(th))
	overloaded := errors.New("503")
	for range 4 {
		_, err := throttle.Execute(ctx, th, func(context.Context) (int, error) { return 0, overloaded })
		errorIs(t, err, overloaded)
	}
	_, err = throttle.Execute(ctx, th, func(context.Context) (int, error) { return 1, nil })
	errorIs(t, err, throttle.ErrThrottled)

	// Breakers per host, 2 keys at most: a is forced open, c's creation evicts b.
	hosts, err := keyed.New(keyed.Config{MaxKeys: 2}, func(host string) (*circuitbreaker.CircuitBreaker, error) {
		return circuitbreaker.New(host, circuitbreaker.Config{})
	})
	noError(t, err)
	kf, err := registry.NewKeyedFamily("hosts", hosts, registry.KeyedFamilyConfig{PerKeySeries: true})
	noError(t, err)
	noError(t, reg.AddKeyed(kf))
	a, err := hosts.Get("a")
	noError(t, err)
	noError(t, a.TransitionToForcedOpenState())
	for _, host := range []string{"b", "c", "a"} {
		_, err = hosts.Get(host)
		noError(t, err)
	}

	noError(t, reg.AddSharedRateLimiter(StoreLimiter{}))
	noError(t, reg.AddSharedCircuitBreaker(StoreBreaker{}))

	return func() {
		for _, p := range held {
			p.OnIgnore()
		}
		for range 3 {
			<-done
		}
	}
}

// noError stops the test when err is not nil.
func noError(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

// errorIs stops the test when err does not match target.
func errorIs(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want one matching %v", err, target)
	}
}
