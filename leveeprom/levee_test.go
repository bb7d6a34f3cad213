package leveeprom_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/keyed"
	"github.com/levee-go/levee/leveeprom"
	"github.com/levee-go/levee/priority"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/throttle"
)

var update = flag.Bool("update", false, "rewrite the golden files of levee's own families")

type fakeStoreLimiter struct{}

func (fakeStoreLimiter) Name() string { return "partner" }
func (fakeStoreLimiter) StoreLimiterMetrics() registry.StoreLimiterMetrics {
	return registry.StoreLimiterMetrics{
		Permitted: 40, Refused: 7, StoreRefused: 2, LocalPermitted: 5, LocalRefused: 3,
		StoreFailures: 4, BreakerRejections: 9, Episodes: 1, Degraded: true, Replicas: 3,
		Replica: "host-a:12", LimitForPeriod: 20, FallbackLimitForPeriod: 6,
		AvailablePermissions: -1, NumberOfWaitingCalls: 2,
	}
}

type fakeStoreBreaker struct{}

func (fakeStoreBreaker) Name() string { return "payments" }
func (fakeStoreBreaker) StoreBreakerMetrics() registry.StoreBreakerMetrics {
	return registry.StoreBreakerMetrics{
		State: circuitbreaker.Open, Version: 7, Origin: "host-b:34", Replica: "host-a:12",
		Published: 2, Adopted: 5, Conflicts: 1, StoreErrors: 3, LocalDecisions: 1, TrialRefusals: 4,
		StoreAvailable: true,
	}
}

func fixedLimit(n int) adaptive.Config {
	return adaptive.Config{InitialLimit: n, MinLimit: n, MaxLimit: n}
}

// populateLevee fills reg with one instance of each of levee's own patterns, used as
// testdata/levee.prom says, and returns the function that ends the calls still held.
func populateLevee(t *testing.T, reg *registry.Registry) (release func()) {
	t.Helper()
	ctx := context.Background()
	var held []adaptive.Permit
	take := func(p adaptive.Permit, err error) {
		t.Helper()
		require.NoError(t, err)
		held = append(held, p)
	}

	// An adaptive limiter of 2: two calls hold a permit, a third is rejected.
	al, err := adaptive.New("api", fixedLimit(2))
	require.NoError(t, err)
	require.NoError(t, reg.AddAdaptiveLimiter(al))
	take(al.Acquire(ctx))
	take(al.Acquire(ctx))
	_, err = al.Acquire(ctx)
	require.ErrorIs(t, err, adaptive.ErrLimitExceeded)

	// Gradient2 after one call of 10ms.
	g2cfg := fixedLimit(4)
	g2cfg.Algorithm = adaptive.Gradient2
	g2, err := adaptive.New("search", g2cfg)
	require.NoError(t, err)
	require.NoError(t, reg.AddAdaptiveLimiter(g2))
	pm, err := g2.Acquire(ctx)
	require.NoError(t, err)
	time.Sleep(10 * time.Millisecond)
	pm.OnSuccess()

	// Partitions live 0.9 and batch 0.1 of a limit of 2: live takes 2, batch 1 (its share,
	// past the limit), and batch's second is rejected.
	pl, err := adaptive.NewPartitioned("tenants", adaptive.PartitionedConfig{
		Config:     fixedLimit(2),
		Partitions: []adaptive.Partition{{Name: "live", Share: 0.9}, {Name: "batch", Share: 0.1}},
	})
	require.NoError(t, err)
	require.NoError(t, reg.AddPartitionedLimiter(pl))
	take(pl.AcquirePartition(ctx, "live"))
	take(pl.AcquirePartition(ctx, "live"))
	take(pl.AcquirePartition(ctx, "batch"))
	_, err = pl.AcquirePartition(ctx, "batch")
	require.ErrorIs(t, err, adaptive.ErrLimitExceeded)

	// A limit of 2 per key, one key at most: a takes both, b is one key too many, a's third
	// is past its share.
	kl, err := adaptive.NewKeyed("users", adaptive.KeyedConfig{Config: adaptive.Config{InitialLimit: 2, MinLimit: 2, MaxLimit: 2}, MaxKeys: 1})
	require.NoError(t, err)
	require.NoError(t, reg.AddPartitionedLimiter(kl))
	take(kl.AcquirePartition(ctx, "a"))
	take(kl.AcquirePartition(ctx, "a"))
	_, err = kl.AcquirePartition(ctx, "b")
	require.ErrorIs(t, err, adaptive.ErrLimitExceeded)
	_, err = kl.AcquirePartition(ctx, "a")
	require.ErrorIs(t, err, adaptive.ErrLimitExceeded)

	// A prioritizer over a limit of 2 with a queue: two normal calls hold permits, three wait,
	// and after a calibration (rate 0.5) a sheddable call is shed.
	ql, err := adaptive.New("queue", adaptive.Config{InitialLimit: 2, MinLimit: 2, MaxLimit: 2, MaxQueued: 10, MaxWaitDuration: time.Hour})
	require.NoError(t, err)
	pr, err := adaptive.NewPrioritizer("service", adaptive.PrioritizerConfig{CalibrationInterval: time.Second})
	require.NoError(t, err)
	pr.Register(ql)
	require.NoError(t, reg.AddPrioritizer(pr))
	normal := priority.WithLevel(ctx, 250)
	var queued []adaptive.Permit
	for range 2 {
		pm, err := pr.Acquire(normal, ql)
		require.NoError(t, err)
		queued = append(queued, pm)
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
	require.ErrorIs(t, err, adaptive.ErrShed)

	// A throttler after 4 rejections by the backend: probability (4 − 2×0)/(4+1) = 0.8, and
	// the fifth call (random 0.75, which the fourth passed at 3/4) is throttled.
	th, err := throttle.New("inventory", throttle.Config{Random: func() float64 { return 0.75 }})
	require.NoError(t, err)
	require.NoError(t, reg.AddThrottler(th))
	overloaded := errors.New("503")
	for range 4 {
		_, err := throttle.Execute(ctx, th, func(context.Context) (int, error) { return 0, overloaded })
		require.ErrorIs(t, err, overloaded)
	}
	_, err = throttle.Execute(ctx, th, func(context.Context) (int, error) { return 1, nil })
	require.ErrorIs(t, err, throttle.ErrThrottled)

	// Breakers per host, 2 keys at most: a is forced open, c's creation evicts b.
	hosts, err := keyed.New(keyed.Config{MaxKeys: 2}, func(host string) (*circuitbreaker.CircuitBreaker, error) {
		return circuitbreaker.New(host, circuitbreaker.Config{})
	})
	require.NoError(t, err)
	kf, err := registry.NewKeyedFamily("hosts", hosts, registry.KeyedFamilyConfig{PerKeySeries: true})
	require.NoError(t, err)
	require.NoError(t, reg.AddKeyed(kf))
	a, err := hosts.Get("a")
	require.NoError(t, err)
	require.NoError(t, a.TransitionToForcedOpenState())
	_, err = hosts.Get("b")
	require.NoError(t, err)
	_, err = hosts.Get("c")
	require.NoError(t, err)
	_, err = hosts.Get("a")
	require.NoError(t, err)

	require.NoError(t, reg.AddSharedRateLimiter(fakeStoreLimiter{}))
	require.NoError(t, reg.AddSharedCircuitBreaker(fakeStoreBreaker{}))

	return func() {
		for _, p := range append(held, queued...) {
			p.OnIgnore()
		}
		for range 3 {
			<-done
		}
	}
}

// levee's own families, scraped: every figure of the scenario above, exactly.
func TestLeveeFamiliesGolden(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := registry.New()
		c := leveeprom.NewCollector(reg)
		defer c.Close()
		release := populateLevee(t, reg)
		defer release()

		if *update {
			preg := prometheus.NewPedanticRegistry()
			require.NoError(t, preg.Register(c))
			mfs, err := preg.Gather()
			require.NoError(t, err)
			var b strings.Builder
			for _, mf := range mfs {
				_, err := expfmt.MetricFamilyToText(&b, mf)
				require.NoError(t, err)
			}
			require.NoError(t, os.WriteFile("testdata/levee.prom", []byte(b.String()), 0o644))
		}
		golden, err := os.Open("testdata/levee.prom")
		require.NoError(t, err)
		defer golden.Close()
		require.NoError(t, testutil.CollectAndCompare(c, golden))

		problems, err := testutil.CollectAndLint(c)
		require.NoError(t, err)
		assert.Empty(t, problems)
	})
}

// An evicted key's series are gone from the next scrape; the family's aggregates count the
// eviction.
func TestKeyedEvictionRemovesSeries(t *testing.T) {
	reg := registry.New()
	c := leveeprom.NewCollector(reg)
	defer c.Close()
	hosts, err := keyed.New(keyed.Config{MaxKeys: 2}, func(host string) (*circuitbreaker.CircuitBreaker, error) {
		return circuitbreaker.New(host, circuitbreaker.Config{})
	})
	require.NoError(t, err)
	kf, err := registry.NewKeyedFamily("hosts", hosts, registry.KeyedFamilyConfig{PerKeySeries: true})
	require.NoError(t, err)
	require.NoError(t, reg.AddKeyed(kf))
	for _, h := range []string{"a", "b"} {
		_, err := hosts.Get(h)
		require.NoError(t, err)
	}
	closedOf := func(key string) map[string]string {
		return map[string]string{"name": "hosts", "key": key, "state": "closed"}
	}
	assert.Equal(t, 1.0, value(t, c, leveeprom.KeyedCircuitBreakerState, closedOf("a")))
	assert.Equal(t, 1.0, value(t, c, leveeprom.KeyedCircuitBreakerState, closedOf("b")))
	assert.Equal(t, 12, testutil.CollectAndCount(c, leveeprom.KeyedCircuitBreakerState))

	require.True(t, hosts.Remove("a"))
	assert.Equal(t, 6, testutil.CollectAndCount(c, leveeprom.KeyedCircuitBreakerState), "b's six states only")
	assert.Equal(t, 1.0, value(t, c, leveeprom.KeyedCircuitBreakerState, closedOf("b")))
	assert.Equal(t, 1.0, value(t, c, leveeprom.KeyedEvictions, map[string]string{"name": "hosts", "kind": "removed"}))
	assert.Equal(t, 1.0, value(t, c, leveeprom.KeyedCircuitBreakers, map[string]string{"name": "hosts", "state": "closed"}))

	_, ok := reg.RemoveKeyed("hosts")
	require.True(t, ok)
	assert.Zero(t, testutil.CollectAndCount(c, leveeprom.KeyedKeys, leveeprom.KeyedCircuitBreakerState))
}

func TestReservedTagKeys(t *testing.T) {
	err := testutil.CollectAndCompare(leveeprom.NewCollector(registry.New(), leveeprom.WithTagKeys("partition")), strings.NewReader(""))
	assert.ErrorContains(t, err, `leveeprom: tag key must not be a label of levee's own families (partition, priority, key, algorithm, origin, replica), got "partition"`)
}
