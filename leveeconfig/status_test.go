package leveeconfig_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/leveestatus"
	"github.com/levee-go/levee/registry"
)

// StatusOptions carries the keys that configure the status API: registerHealthIndicator
// (only registered breakers are health components), allowHealthIndicatorToFail and
// eventConsumerBufferSize (what is kept of each instance's events).
func TestStatusOptionsFromTheFile(t *testing.T) {
	c, err := load(t, `resilience4j:
  circuitbreaker:
    instances:
      payment:
        registerHealthIndicator: true
        allowHealthIndicatorToFail: true
        eventConsumerBufferSize: 2
      stock:
        minimumNumberOfCalls: 1
  retry:
    instances:
      payment:
        eventConsumerBufferSize: 70000
`)
	assert.EqualError(t, err, "app.yml:13: resilience4j.retry.instances.payment.eventConsumerBufferSize: must be at least 1 and at most 65536, got 70000")
	assert.Nil(t, c)

	c, err = load(t, `resilience4j:
  circuitbreaker:
    instances:
      payment:
        registerHealthIndicator: true
        allowHealthIndicatorToFail: true
        eventConsumerBufferSize: 2
        minimumNumberOfCalls: 1
        slidingWindowSize: 1
      stock:
        minimumNumberOfCalls: 1
`)
	require.NoError(t, err)
	assert.Empty(t, c.Warnings)
	reg := registry.New()
	require.NoError(t, c.Apply(reg))
	h, err := leveestatus.NewHandler(reg, c.StatusOptions()...)
	require.NoError(t, err)
	defer h.Close()

	pay, ok := reg.FindCircuitBreaker("payment")
	require.True(t, ok)
	for range 3 {
		p, err := pay.Acquire()
		if err == nil {
			p.OnError(assert.AnError)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/health", nil))
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code, "payment is OPEN and may fail the health")
	var health struct {
		Status     string                     `json:"status"`
		Components map[string]json.RawMessage `json:"components"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &health))
	assert.Equal(t, "DOWN", health.Status)
	assert.Equal(t, []string{"payment"}, slices.Sorted(maps.Keys(health.Components)), "stock registers no health indicator")

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/circuitbreakerevents/payment", nil))
	var events struct {
		List []struct {
			Type string `json:"type"`
		} `json:"circuitBreakerEvents"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &events))
	require.Len(t, events.List, 2, "eventConsumerBufferSize: 2")
	assert.Equal(t, "NOT_PERMITTED", events.List[1].Type)
}
