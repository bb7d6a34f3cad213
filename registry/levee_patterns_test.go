package registry_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/adaptive"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/keyed"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/throttle"
)

type storeLimiter struct {
	name string
	m    registry.StoreLimiterMetrics
}

func (s *storeLimiter) Name() string                                      { return s.name }
func (s *storeLimiter) StoreLimiterMetrics() registry.StoreLimiterMetrics { return s.m }

type storeBreaker struct{ name string }

func (s *storeBreaker) Name() string { return s.name }
func (s *storeBreaker) StoreBreakerMetrics() registry.StoreBreakerMetrics {
	return registry.StoreBreakerMetrics{Version: 3, Origin: "host-1"}
}

func TestLeveePatternsAddFindListRemove(t *testing.T) {
	reg := registry.New()
	var events []string
	defer reg.Subscribe(func(e registry.Event) { events = append(events, e.Type.String()+" "+string(e.Pattern)+" "+e.Name) })()

	al, err := adaptive.New("api", adaptive.Config{})
	require.NoError(t, err)
	pl, err := adaptive.NewPartitioned("api", adaptive.PartitionedConfig{})
	require.NoError(t, err)
	pr, err := adaptive.NewPrioritizer("api", adaptive.PrioritizerConfig{})
	require.NoError(t, err)
	th, err := throttle.New("api", throttle.Config{})
	require.NoError(t, err)
	k, err := keyed.New(keyed.Config{MaxKeys: 10}, func(host string) (*circuitbreaker.CircuitBreaker, error) {
		return circuitbreaker.New(host, circuitbreaker.Config{})
	})
	require.NoError(t, err)
	kf, err := registry.NewKeyedFamily("api", k, registry.KeyedFamilyConfig{})
	require.NoError(t, err)
	sl := &storeLimiter{name: "api"}
	sb := &storeBreaker{name: "api"}

	require.NoError(t, reg.AddAdaptiveLimiter(al))
	require.NoError(t, reg.AddPartitionedLimiter(pl))
	require.NoError(t, reg.AddPrioritizer(pr))
	require.NoError(t, reg.AddThrottler(th))
	require.NoError(t, reg.AddKeyed(kf))
	require.NoError(t, reg.AddSharedRateLimiter(sl))
	require.NoError(t, reg.AddSharedCircuitBreaker(sb))
	require.NoError(t, reg.AddSharedCircuitBreaker(sb), "the same instance again is a no-op")

	al2, err := adaptive.New("api", adaptive.Config{})
	require.NoError(t, err)
	assert.EqualError(t, reg.AddAdaptiveLimiter(al2), `registry: name already registered: adaptive "api"`)
	assert.EqualError(t, reg.AddSharedRateLimiter(&storeLimiter{name: "api"}), `registry: name already registered: sharedratelimiter "api"`)
	assert.EqualError(t, reg.AddSharedRateLimiter(nil), "registry: nil instance of sharedratelimiter")
	assert.EqualError(t, reg.AddSharedRateLimiter((*storeLimiter)(nil)), "registry: nil instance of sharedratelimiter")
	assert.EqualError(t, reg.AddThrottler(nil), "registry: nil instance of throttle")

	got, ok := reg.FindAdaptiveLimiter("api")
	assert.True(t, ok)
	assert.Same(t, al, got)
	gotP, _ := reg.FindPartitionedLimiter("api")
	assert.Same(t, pl, gotP)
	gotPr, _ := reg.FindPrioritizer("api")
	assert.Same(t, pr, gotPr)
	gotT, _ := reg.FindThrottler("api")
	assert.Same(t, th, gotT)
	gotK, _ := reg.FindKeyed("api")
	assert.Same(t, kf, gotK)
	gotS, _ := reg.FindSharedRateLimiter("api")
	assert.Same(t, sl, gotS)
	gotB, _ := reg.FindSharedCircuitBreaker("api")
	assert.Same(t, sb, gotB)
	assert.Equal(t, []registry.StoreLimiter{sl}, reg.SharedRateLimiters())
	assert.Equal(t, []*registry.KeyedFamily{kf}, reg.KeyedFamilies())
	assert.Len(t, reg.AdaptiveLimiters(), 1)
	assert.Len(t, reg.PartitionedLimiters(), 1)
	assert.Len(t, reg.Prioritizers(), 1)
	assert.Len(t, reg.Throttlers(), 1)
	assert.Len(t, reg.SharedCircuitBreakers(), 1)

	require.NoError(t, reg.SetTags(registry.Throttler, "api", map[string]string{"team": "a"}))
	assert.Equal(t, map[string]string{"team": "a"}, reg.Tags(registry.Throttler, "api"))
	assert.Equal(t, "registry{adaptive: api; partitioned: api; prioritizer: api; throttle: api; keyed: api; "+
		"sharedratelimiter: api; sharedcircuitbreaker: api}", reg.String())

	old, replaced, err := reg.ReplaceAdaptiveLimiter(al2)
	require.NoError(t, err)
	assert.True(t, replaced)
	assert.Same(t, al, old)

	removed, ok := reg.RemoveThrottler("api")
	assert.True(t, ok)
	assert.Same(t, th, removed)
	assert.Nil(t, reg.Tags(registry.Throttler, "api"), "the tags go with the instance")
	_, ok = reg.RemoveThrottler("api")
	assert.False(t, ok)
	rs, ok := reg.RemoveSharedRateLimiter("api")
	assert.True(t, ok)
	assert.Same(t, sl, rs)
	assert.Empty(t, reg.SharedRateLimiters())

	assert.Equal(t, []string{
		"ADDED adaptive api", "ADDED partitioned api", "ADDED prioritizer api", "ADDED throttle api",
		"ADDED keyed api", "ADDED sharedratelimiter api", "ADDED sharedcircuitbreaker api",
		"REPLACED adaptive api", "REMOVED throttle api", "REMOVED sharedratelimiter api",
	}, events)
}

func TestKeyedFamily(t *testing.T) {
	k, err := keyed.New(keyed.Config{MaxKeys: 2, IdleTimeout: keyed.NoIdleTimeout}, func(host string) (*circuitbreaker.CircuitBreaker, error) {
		return circuitbreaker.New(host, circuitbreaker.Config{})
	})
	require.NoError(t, err)
	kf, err := registry.NewKeyedFamily("hosts", k, registry.KeyedFamilyConfig{PerKeySeries: true})
	require.NoError(t, err)
	assert.Equal(t, "hosts", kf.Name())
	assert.Equal(t, 2, kf.Config().MaxKeys)
	assert.True(t, kf.PerKeySeries())

	a, err := k.Get("a")
	require.NoError(t, err)
	_, err = k.Get("b")
	require.NoError(t, err)
	require.NoError(t, a.TransitionToForcedOpenState())
	states, ok := kf.CircuitBreakerStates()
	assert.True(t, ok)
	assert.Equal(t, map[circuitbreaker.State]int{circuitbreaker.Closed: 1, circuitbreaker.ForcedOpen: 1,
		circuitbreaker.Open: 0, circuitbreaker.HalfOpen: 0, circuitbreaker.Disabled: 0, circuitbreaker.MetricsOnly: 0}, states)
	keys := kf.Keys()
	require.Len(t, keys, 2)
	assert.Equal(t, "a", keys[0].Key)
	assert.Same(t, a, keys[0].Instance)
	assert.Equal(t, "b", keys[1].Key)

	_, err = k.Get("c") // evicts b, the least recently used unprotected key
	require.NoError(t, err)
	keys = kf.Keys()
	require.Len(t, keys, 2)
	assert.Equal(t, []string{"a", "c"}, []string{keys[0].Key, keys[1].Key})
	m := kf.Metrics()
	assert.Equal(t, keyed.Metrics{Keys: 2, Misses: 3, Created: 3, EvictedCapacity: 1}, m)

	lim, err := keyed.New(keyed.Config{}, func(string) (*adaptive.Limiter, error) { return adaptive.New("x", adaptive.Config{}) })
	require.NoError(t, err)
	lf, err := registry.NewKeyedFamily("tenants", lim, registry.KeyedFamilyConfig{})
	require.NoError(t, err)
	_, ok = lf.CircuitBreakerStates()
	assert.False(t, ok)
	assert.Nil(t, lf.Keys())
	assert.False(t, lf.PerKeySeries())

	_, err = registry.NewKeyedFamily("tenants", lim, registry.KeyedFamilyConfig{PerKeySeries: true})
	assert.EqualError(t, err, "registry: KeyedFamilyConfig.PerKeySeries needs MaxKeys in [1, 100], got 10000")
	_, err = registry.NewKeyedFamily("", lim, registry.KeyedFamilyConfig{})
	assert.EqualError(t, err, `registry: NewKeyedFamily needs a name, got ""`)
	_, err = registry.NewKeyedFamily[string, *adaptive.Limiter]("x", nil, registry.KeyedFamilyConfig{})
	assert.EqualError(t, err, "registry: NewKeyedFamily needs a *keyed.Keyed, got nil")
}
