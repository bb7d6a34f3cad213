package leveestatus_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveestatus"
	"github.com/levee-go/levee/registry"
)

func TestHealthStaysUpWhileABreakerIsOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScenario(t)
		code, ct, body := do(t, s.h, http.MethodGet, "/health", "")
		assert.Equal(t, http.StatusOK, code)
		assert.Equal(t, "application/json", ct)
		assert.JSONEq(t, `{"status":"UP","components":{
			"payment":{"status":"UP","details":`+paymentJSON+`},
			"stock":{"status":"CIRCUIT_OPEN","details":`+stockJSON+`}}}`, body)
	})
}

func TestHealthIsDownWhenAnOptedInBreakerIsOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScenario(t, leveestatus.AllowHealthIndicatorToFail("stock"))
		code, _, body := do(t, s.h, http.MethodGet, "/health", "")
		assert.Equal(t, http.StatusServiceUnavailable, code)
		assert.JSONEq(t, `{"status":"DOWN","components":{
			"payment":{"status":"UP","details":`+paymentJSON+`},
			"stock":{"status":"DOWN","details":`+stockJSON+`}}}`, body)

		// Opted in but CLOSED, or OPEN but not opted in: UP.
		s2 := newScenario(t, leveestatus.AllowHealthIndicatorToFail("payment"))
		code, _, _ = do(t, s2.h, http.MethodGet, "/health", "")
		assert.Equal(t, http.StatusOK, code)
	})
}

func TestHealthStatusOfEveryState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := registry.New()
		cb := must(circuitbreaker.New("b", circuitbreaker.Config{}))
		require.NoError(t, reg.AddCircuitBreaker(cb))
		h := must(leveestatus.NewHandler(reg, leveestatus.AllowHealthIndicatorToFail("b")))
		defer h.Close()
		for _, c := range []struct {
			move   func() error
			status string
			code   int
		}{
			{cb.TransitionToOpenState, "DOWN", 503},
			{cb.TransitionToHalfOpenState, "CIRCUIT_HALF_OPEN", 200},
			{cb.TransitionToClosedState, "UP", 200},
			{cb.TransitionToForcedOpenState, "UNKNOWN", 200},
			{cb.TransitionToDisabledState, "UNKNOWN", 200},
			{cb.TransitionToMetricsOnlyState, "UNKNOWN", 200},
		} {
			require.NoError(t, c.move())
			code, _, body := do(t, h, http.MethodGet, "/health", "")
			assert.Equal(t, c.code, code, cb.State().String())
			assert.Contains(t, body, `"b":{"status":"`+c.status+`"`, cb.State().String())
		}
	})
}

func TestHealthOfAnEmptyRegistry(t *testing.T) {
	h := must(leveestatus.NewHandler(registry.New()))
	defer h.Close()
	assert.JSONEq(t, `{"status":"UP","components":{}}`, get(t, h, "/health"))
}

func TestStateUpdatesAreForbiddenUnlessEnabled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScenario(t)
		code, ct, body := do(t, s.h, http.MethodPost, "/circuitbreakers/payment", `{"updateState":"FORCE_OPEN"}`)
		assert.Equal(t, http.StatusForbidden, code)
		assert.Equal(t, "application/json", ct)
		assert.JSONEq(t, `{"status":403,"error":"Forbidden","path":"/circuitbreakers/payment",
			"message":"leveestatus: state updates are not enabled (EnableStateUpdates)"}`, body)
		assert.Equal(t, circuitbreaker.Closed, s.payment.State())
	})
}

func TestStateUpdates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScenario(t, leveestatus.EnableStateUpdates())
		for _, c := range []struct{ update, state string }{
			{"FORCE_OPEN", "FORCED_OPEN"},
			{"DISABLE", "DISABLED"},
			{"METRICS_ONLY", "METRICS_ONLY"},
			{"CLOSE", "CLOSED"},
		} {
			code, ct, body := do(t, s.h, http.MethodPost, "/circuitbreakers/payment", `{"updateState":"`+c.update+`"}`)
			assert.Equal(t, http.StatusOK, code, body)
			assert.Equal(t, "application/json", ct)
			assert.JSONEq(t, `{"circuitBreakerName":"payment","currentState":"`+c.state+`",
				"message":"payment state has been changed successfully"}`, body)
			assert.Equal(t, c.state, s.payment.State().String())
		}
		code, _, body := do(t, s.h, http.MethodPost, "/circuitbreakers/stock", `{"updateState":"RESET"}`)
		assert.Equal(t, http.StatusOK, code)
		assert.JSONEq(t, `{"circuitBreakerName":"stock","currentState":"CLOSED",
			"message":"stock state has been changed successfully"}`, body)
		// RESET published a transition and the reset.
		assert.JSONEq(t, `{"circuitBreakerEvents":[`+
			cbEvent("stock", "STATE_TRANSITION", t0, `,"stateTransition":"CLOSED_TO_OPEN"`)+","+
			cbEvent("stock", "STATE_TRANSITION", t3, `,"stateTransition":"OPEN_TO_CLOSED"`)+`]}`,
			get(t, s.h, "/circuitbreakerevents/stock/STATE_TRANSITION"))
		assert.JSONEq(t, `{"circuitBreakerEvents":[`+cbEvent("stock", "RESET", t3, "")+`]}`,
			get(t, s.h, "/circuitbreakerevents/stock/RESET"))

		code, _, body = do(t, s.h, http.MethodPost, "/circuitbreakers/payment", `{"updateState":"OPEN"}`)
		assert.Equal(t, http.StatusBadRequest, code)
		assert.JSONEq(t, `{"status":400,"error":"Bad Request","path":"/circuitbreakers/payment",
			"message":"leveestatus: updateState must be one of CLOSE, FORCE_OPEN, DISABLE, METRICS_ONLY, RESET, got \"OPEN\""}`, body)
		code, _, _ = do(t, s.h, http.MethodPost, "/circuitbreakers/payment", `not json`)
		assert.Equal(t, http.StatusBadRequest, code)
		code, _, _ = do(t, s.h, http.MethodPost, "/circuitbreakers/payment", `{"updateState":"CLOSE","x":1}`)
		assert.Equal(t, http.StatusBadRequest, code)
		code, _, body = do(t, s.h, http.MethodPost, "/circuitbreakers/nope", `{"updateState":"CLOSE"}`)
		assert.Equal(t, http.StatusNotFound, code)
		assert.JSONEq(t, `{"status":404,"error":"Not Found","path":"/circuitbreakers/nope",
			"message":"leveestatus: no circuitbreaker named \"nope\""}`, body)
	})
}

func TestInstancesAddedAndRemovedLater(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := registry.New()
		h := must(leveestatus.NewHandler(reg))
		defer h.Close()
		fail := func(cb *circuitbreaker.CircuitBreaker) {
			_, _ = circuitbreaker.Execute(context.Background(), cb, func(context.Context) (int, error) { return 0, errDown })
		}
		a := must(circuitbreaker.New("a", circuitbreaker.Config{}))
		require.NoError(t, reg.AddCircuitBreaker(a))
		fail(a)
		errA := cbEvent("a", "ERROR", t0, `,"errorMessage":"stock down","durationInMs":0`)
		assert.JSONEq(t, `{"circuitBreakerEvents":[`+errA+`]}`, get(t, h, "/circuitbreakerevents/a"))

		// Removed: no longer listed; its calls meanwhile are not kept, and it starts afresh
		// when added again.
		_, ok := reg.RemoveCircuitBreaker("a")
		require.True(t, ok)
		code, _, _ := do(t, h, http.MethodGet, "/circuitbreakerevents/a", "")
		assert.Equal(t, http.StatusNotFound, code)
		time.Sleep(time.Second)
		fail(a)
		require.NoError(t, reg.AddCircuitBreaker(a))
		assert.JSONEq(t, `{"circuitBreakerEvents":[]}`, get(t, h, "/circuitbreakerevents/a"))

		// Replaced: the new instance's events, not the old one's.
		b := must(circuitbreaker.New("a", circuitbreaker.Config{}))
		_, replaced, err := reg.ReplaceCircuitBreaker(b)
		require.NoError(t, err)
		require.True(t, replaced)
		fail(a)
		fail(b)
		assert.JSONEq(t, `{"circuitBreakerEvents":[`+
			cbEvent("a", "ERROR", "2000-01-01T00:00:01Z", `,"errorMessage":"stock down","durationInMs":0`)+`]}`,
			get(t, h, "/circuitbreakerevents/a"))
	})
}

func TestClosedHandlerAnswers503(t *testing.T) {
	h := must(leveestatus.NewHandler(registry.New()))
	require.NoError(t, h.Close())
	require.NoError(t, h.Close())
	code, ct, body := do(t, h, http.MethodGet, "/health", "")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "application/json", ct)
	assert.JSONEq(t, `{"status":503,"error":"Service Unavailable","path":"/health","message":"leveestatus: handler closed"}`, body)
}

func TestNewHandlerRefusesInvalidOptions(t *testing.T) {
	_, err := leveestatus.NewHandler(nil)
	assert.ErrorIs(t, err, leveestatus.ErrNilRegistry)
	for _, c := range []struct {
		opt leveestatus.Option
		msg string
	}{
		{leveestatus.EventConsumerBufferSize(0), "leveestatus: EventConsumerBufferSize must be in [1, 65536], got 0"},
		{leveestatus.EventConsumerBufferSize(65537), "leveestatus: EventConsumerBufferSize must be in [1, 65536], got 65537"},
		{leveestatus.SnapshotInterval(time.Millisecond), "leveestatus: SnapshotInterval must be in [10ms, 1h0m0s], got 1ms"},
		{leveestatus.SnapshotInterval(2 * time.Hour), "leveestatus: SnapshotInterval must be in [10ms, 1h0m0s], got 2h0m0s"},
	} {
		h, err := leveestatus.NewHandler(registry.New(), c.opt)
		assert.Nil(t, h)
		assert.EqualError(t, err, c.msg)
	}
}

// Instances added and removed while handlers are created: afterwards every registered
// instance is watched (its next call is kept) exactly once.
func TestHandlerCreatedWhileTheRegistryChanges(t *testing.T) {
	for range 20 {
		reg := registry.New()
		breakers := make([]*circuitbreaker.CircuitBreaker, 8)
		for i := range breakers {
			breakers[i] = must(circuitbreaker.New(string(rune('a'+i)), circuitbreaker.Config{}))
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for round := range 4 {
				for i, cb := range breakers {
					if (i+round)%2 == 0 {
						_ = reg.AddCircuitBreaker(cb)
					} else {
						reg.RemoveCircuitBreaker(cb.Name())
					}
				}
			}
		}()
		h := must(leveestatus.NewHandler(reg))
		<-done
		for _, cb := range reg.CircuitBreakers() {
			_, _ = circuitbreaker.Execute(context.Background(), cb, func(context.Context) (int, error) { return 1, nil })
			body := get(t, h, "/circuitbreakerevents/"+cb.Name())
			assert.Equal(t, 1, strings.Count(body, `"type":"SUCCESS"`), body)
		}
		require.NoError(t, h.Close())
	}
}
