package leveeotel_test

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/internal/leveefixture"
	"github.com/levee-go/levee/keyed"
	"github.com/levee-go/levee/registry"
)

var update = flag.Bool("update", false, "rewrite testdata/levee.txt")

// flatten writes every levee instrument's unit and description, and every data point of it as
// one line "instrument{key=value,...} value", sorted, the attributes in key order.
func flatten(got map[string]metricdata.Metrics) string {
	var lines []string
	add := func(name string, set attribute.Set, v any) {
		lines = append(lines, fmt.Sprintf("%s{%s} %v", name, set.Encoded(attribute.DefaultEncoder()), v))
	}
	for name, m := range got {
		if !strings.HasPrefix(name, "levee.") {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s unit=%q description=%q", name, m.Unit, m.Description))
		switch d := m.Data.(type) {
		case metricdata.Gauge[int64]:
			for _, p := range d.DataPoints {
				add(name, p.Attributes, p.Value)
			}
		case metricdata.Gauge[float64]:
			for _, p := range d.DataPoints {
				add(name, p.Attributes, p.Value)
			}
		case metricdata.Sum[int64]:
			for _, p := range d.DataPoints {
				add(name+" (sum)", p.Attributes, p.Value)
			}
		default:
			lines = append(lines, fmt.Sprintf("%s: unexpected %T", name, d))
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n"
}

// levee's own instruments, collected by a manual reader: every figure of the scenario of
// leveefixture.Populate, exactly (the same figures as leveeprom's testdata/levee.prom).
func TestLeveeInstrumentsGolden(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		release := leveefixture.Populate(t, h.reg)
		defer release()
		got := flatten(h.collect(t))
		if *update {
			require.NoError(t, os.WriteFile("testdata/levee.txt", []byte(got), 0o644))
		}
		want, err := os.ReadFile("testdata/levee.txt")
		require.NoError(t, err)
		assert.Equal(t, string(want), got)
	})
}

// An evicted key's data points are gone from the next collection; the family's counters
// count the eviction.
func TestKeyedEvictionRemovesDataPoints(t *testing.T) {
	h := newHarness(t)
	hosts, err := keyed.New(keyed.Config{MaxKeys: 2}, func(host string) (*circuitbreaker.CircuitBreaker, error) {
		return circuitbreaker.New(host, circuitbreaker.Config{})
	})
	require.NoError(t, err)
	kf, err := registry.NewKeyedFamily("hosts", hosts, registry.KeyedFamilyConfig{PerKeySeries: true})
	require.NoError(t, err)
	require.NoError(t, h.reg.AddKeyed(kf))
	for _, k := range []string{"a", "b"} {
		_, err := hosts.Get(k)
		require.NoError(t, err)
	}
	keys := func() []string {
		var out []string
		for _, p := range h.collect(t)["levee.keyed.circuitbreaker.state"].Data.(metricdata.Gauge[int64]).DataPoints {
			if v, _ := p.Attributes.Value("state"); v.AsString() == "closed" {
				k, _ := p.Attributes.Value("key")
				out = append(out, fmt.Sprintf("%s=%d", k.AsString(), p.Value))
			}
		}
		slices.Sort(out)
		return out
	}
	assert.Equal(t, []string{"a=1", "b=1"}, keys())
	require.True(t, hosts.Remove("a"))
	assert.Equal(t, []string{"b=1"}, keys(), "a's data points left with it")
	got := h.collect(t)
	assert.Len(t, got["levee.keyed.circuitbreaker.state"].Data.(metricdata.Gauge[int64]).DataPoints, 6)
	var removed int64
	for _, p := range got["levee.keyed.evictions"].Data.(metricdata.Sum[int64]).DataPoints {
		if v, _ := p.Attributes.Value("kind"); v.AsString() == "removed" {
			removed = p.Value
		}
	}
	assert.Equal(t, int64(1), removed)
	_, ok := h.reg.RemoveKeyed("hosts")
	require.True(t, ok)
	_, present := h.collect(t)["levee.keyed.keys"]
	assert.False(t, present, "a removed family reports nothing")
}
