package leveeprom_test

import (
	"flag"
	"os"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/internal/leveefixture"
	"github.com/levee-go/levee/keyed"
	"github.com/levee-go/levee/leveeprom"
	"github.com/levee-go/levee/registry"
)

var update = flag.Bool("update", false, "rewrite the golden files of levee's own families")

// levee's own families, scraped: every figure of the scenario of leveefixture.Populate, exactly.
func TestLeveeFamiliesGolden(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := registry.New()
		c := leveeprom.NewCollector(reg)
		defer c.Close()
		release := leveefixture.Populate(t, reg)
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
