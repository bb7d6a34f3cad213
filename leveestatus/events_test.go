package leveestatus_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveestatus"
	"github.com/levee-go/levee/registry"
)

// types returns the type of each event of a circuitbreakerevents answer.
func types(t *testing.T, body string) []string {
	t.Helper()
	var out struct {
		Events []struct {
			Type         string `json:"type"`
			ErrorMessage string `json:"errorMessage"`
		} `json:"circuitBreakerEvents"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &out), body)
	ts := make([]string, len(out.Events))
	for i, e := range out.Events {
		ts[i] = e.Type
	}
	return ts
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// A storm of 196 NOT_PERMITTED events after the failures that opened a breaker leaves the
// ERROR events under /circuitbreakerevents/{name}/ERROR: each type keeps its own last
// events. The unfiltered list is still the last 100 events of all types, as Resilience4j's.
func TestANotPermittedStormKeepsTheErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := registry.New()
		b, err := circuitbreaker.New("payment", circuitbreaker.Config{SlidingWindowSize: 4, MinimumNumberOfCalls: 4,
			WaitDurationInOpenState: time.Hour})
		require.NoError(t, err)
		require.NoError(t, reg.AddCircuitBreaker(b))
		h, err := leveestatus.NewHandler(reg)
		require.NoError(t, err)
		defer h.Close()

		declined := errors.New("card declined")
		for range 4 {
			_, err := circuitbreaker.Execute(context.Background(), b, func(context.Context) (int, error) { return 0, declined })
			require.ErrorIs(t, err, declined)
		}
		require.Equal(t, circuitbreaker.Open, b.State())
		for range 196 {
			_, err := circuitbreaker.Execute(context.Background(), b, func(context.Context) (int, error) { return 1, nil })
			require.ErrorIs(t, err, circuitbreaker.ErrCallNotPermitted)
		}

		assert.Equal(t, repeat("ERROR", 4), types(t, get(t, h, "/circuitbreakerevents/payment/ERROR")))
		assert.Equal(t, []string{"STATE_TRANSITION"}, types(t, get(t, h, "/circuitbreakerevents/payment/STATE_TRANSITION")))
		assert.Equal(t, []string{"FAILURE_RATE_EXCEEDED"}, types(t, get(t, h, "/circuitbreakerevents/payment/failure_rate_exceeded")))
		assert.Equal(t, repeat("NOT_PERMITTED", 100), types(t, get(t, h, "/circuitbreakerevents/payment/NOT_PERMITTED")),
			"each type keeps the buffer size of its own")
		assert.Equal(t, repeat("NOT_PERMITTED", 100), types(t, get(t, h, "/circuitbreakerevents/payment")),
			"all types together: the last 100 published")

		for range 2 {
			_, _ = circuitbreaker.Execute(context.Background(), b, func(context.Context) (int, error) { return 1, nil })
		}
		require.NoError(t, b.TransitionToClosedState())
		got := types(t, get(t, h, "/circuitbreakerevents/payment"))
		assert.Equal(t, append(repeat("NOT_PERMITTED", 99), "STATE_TRANSITION"), got)
	})
}

// The buffer size bounds each type: with 3, the last 3 of each.
func TestEachTypeKeepsItsBufferSize(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := registry.New()
		b, err := circuitbreaker.New("payment", circuitbreaker.Config{SlidingWindowSize: 100, MinimumNumberOfCalls: 100})
		require.NoError(t, err)
		require.NoError(t, reg.AddCircuitBreaker(b))
		h, err := leveestatus.NewHandler(reg, leveestatus.EventConsumerBufferSize(3))
		require.NoError(t, err)
		defer h.Close()
		for i := range 5 {
			_, _ = circuitbreaker.Execute(context.Background(), b, func(context.Context) (int, error) {
				return 0, errors.New("e" + string(rune('0'+i)))
			})
			_, _ = circuitbreaker.Execute(context.Background(), b, func(context.Context) (int, error) { return 1, nil })
		}
		assert.Equal(t, repeat("ERROR", 3), types(t, get(t, h, "/circuitbreakerevents/payment/ERROR")))
		assert.Equal(t, repeat("SUCCESS", 3), types(t, get(t, h, "/circuitbreakerevents/payment/SUCCESS")))
		assert.Equal(t, []string{"SUCCESS", "ERROR", "SUCCESS"}, types(t, get(t, h, "/circuitbreakerevents/payment")))
	})
}

// An instance's own buffer size, as its eventConsumerBufferSize, sizes what is kept of it;
// the others keep EventConsumerBufferSize.
func TestInstanceEventConsumerBufferSize(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := registry.New()
		for _, name := range []string{"payment", "stock"} {
			b, err := circuitbreaker.New(name, circuitbreaker.Config{SlidingWindowSize: 100, MinimumNumberOfCalls: 100})
			require.NoError(t, err)
			require.NoError(t, reg.AddCircuitBreaker(b))
		}
		h, err := leveestatus.NewHandler(reg, leveestatus.EventConsumerBufferSize(4),
			leveestatus.InstanceEventConsumerBufferSize(registry.CircuitBreaker, "payment", 2))
		require.NoError(t, err)
		defer h.Close()
		for _, b := range reg.CircuitBreakers() {
			for range 6 {
				_, _ = circuitbreaker.Execute(context.Background(), b, func(context.Context) (int, error) { return 1, nil })
			}
		}
		assert.Equal(t, repeat("SUCCESS", 2), types(t, get(t, h, "/circuitbreakerevents/payment")))
		assert.Equal(t, repeat("SUCCESS", 4), types(t, get(t, h, "/circuitbreakerevents/stock")))

		_, err = leveestatus.NewHandler(reg, leveestatus.InstanceEventConsumerBufferSize(registry.Retry, "payment", 0))
		assert.EqualError(t, err, `leveestatus: InstanceEventConsumerBufferSize of retry "payment" must be in [1, 65536], got 0`)
	})
}

// With RegisterHealthIndicators, GET /health lists only the breakers registered, as
// Resilience4j's registerHealthIndicator; with none registered, none.
func TestRegisterHealthIndicators(t *testing.T) {
	reg := registry.New()
	for _, name := range []string{"payment", "stock"} {
		b, err := circuitbreaker.New(name, circuitbreaker.Config{})
		require.NoError(t, err)
		require.NoError(t, reg.AddCircuitBreaker(b))
	}
	components := func(opts ...leveestatus.Option) []string {
		h, err := leveestatus.NewHandler(reg, opts...)
		require.NoError(t, err)
		defer h.Close()
		var out struct {
			Status     string                     `json:"status"`
			Components map[string]json.RawMessage `json:"components"`
		}
		require.NoError(t, json.Unmarshal([]byte(get(t, h, "/health")), &out))
		assert.Equal(t, "UP", out.Status)
		var names []string
		for n := range out.Components {
			names = append(names, n)
		}
		slices.Sort(names)
		return names
	}
	assert.Equal(t, []string{"payment", "stock"}, components())
	assert.Equal(t, []string{"stock"}, components(leveestatus.RegisterHealthIndicators("stock", "gone")))
	assert.Empty(t, components(leveestatus.RegisterHealthIndicators()))
}
