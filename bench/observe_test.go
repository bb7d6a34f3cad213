package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/levee-go/levee/leveeprom"
)

// Each observer of the Observers benchmark sees the calls the case makes: the Prometheus
// collector and OpenTelemetry count 10 successful calls, the logger at Info logs none of
// them and logs a transition, the unobserved breaker builds no event for anyone.
func TestObserverCasesSeeTheCalls(t *testing.T) {
	var logs bytes.Buffer
	obs, err := ObserverCases(&logs)
	require.NoError(t, err)
	defer CloseAll(Cases(obs))
	require.Equal(t, []string{"none", "prometheus", "otel", "slog-info", "otel-producer"}, impls(Cases(obs)))

	ctx := context.Background()
	for _, o := range obs {
		for range 10 {
			require.NoError(t, o.Do(ctx), o.Impl)
		}
		assert.Equal(t, 10, o.Breaker.Metrics().NumberOfSuccessfulCalls, o.Impl)
	}

	// prometheus: resilience4j_circuitbreaker_calls_seconds_count{kind="successful"} 10.
	families, err := obs[1].Prometheus.Gather()
	require.NoError(t, err)
	var promCount uint64
	for _, f := range families {
		if f.GetName() != leveeprom.CircuitBreakerCalls {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "kind" && l.GetValue() == "successful" {
					promCount = m.GetSummary().GetSampleCount()
				}
			}
		}
	}
	assert.Equal(t, uint64(10), promCount)

	// otel and otel-producer: the resilience4j.circuitbreaker.calls histogram counts 10
	// successful calls.
	for _, o := range []Observed{obs[2], obs[4]} {
		var rm metricdata.ResourceMetrics
		require.NoError(t, o.Reader.Collect(ctx, &rm))
		var otelCount uint64
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name != "resilience4j.circuitbreaker.calls" {
					continue
				}
				h, ok := m.Data.(metricdata.Histogram[float64])
				require.True(t, ok, "%T", m.Data)
				for _, dp := range h.DataPoints {
					if v, _ := dp.Attributes.Value("kind"); v.AsString() == "successful" {
						otelCount = dp.Count
					}
				}
			}
		}
		assert.Equal(t, uint64(10), otelCount, o.Impl)
	}

	// slog-info: nothing for the successful calls, one WARN record for a transition to
	// FORCED_OPEN.
	assert.Empty(t, logs.String())
	require.NoError(t, obs[3].Breaker.TransitionToForcedOpenState())
	lines := strings.Split(strings.TrimSuffix(logs.String(), "\n"), "\n")
	require.Len(t, lines, 1, logs.String())
	assert.Contains(t, lines[0], `level=WARN msg="circuit breaker state transition" pattern=circuitbreaker name=payment`)
	assert.Contains(t, lines[0], ` from=CLOSED to=FORCED_OPEN`)
}

// The benchmark's claim as a test: a successful call allocates nothing, whichever observer is
// attached.
func TestObserverCasesAllocateNothingOnSuccess(t *testing.T) {
	obs, err := ObserverCases(nil)
	require.NoError(t, err)
	defer CloseAll(Cases(obs))
	ctx := context.Background()
	for _, o := range obs {
		allocs := testing.AllocsPerRun(100, func() { _ = o.Do(ctx) })
		assert.Equal(t, 0.0, allocs, o.Impl)
	}
}
