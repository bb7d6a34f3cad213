package leveeprom_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveeprom"
	"github.com/levee-go/levee/leveestatus"
	"github.com/levee-go/levee/registry"
)

// The two counts of refused calls, side by side, with Resilience4j's two meanings:
// leveestatus' notPermittedCalls is the actuator's (CircuitBreaker.Metrics of the current
// state: reset by every transition but into OPEN, and counting FORCED_OPEN's refusals), and
// /metrics' resilience4j_circuitbreaker_not_permitted_calls_total is Micrometer's (a counter
// of NOT_PERMITTED events: cumulative, and blind to FORCED_OPEN, which publishes none).
func TestNotPermittedCountsSideBySide(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := registry.New()
		cb, err := circuitbreaker.New("payment", circuitbreaker.Config{SlidingWindowSize: 2, MinimumNumberOfCalls: 2,
			WaitDurationInOpenState: time.Second, PermittedNumberOfCallsInHalfOpenState: 1})
		require.NoError(t, err)
		require.NoError(t, reg.AddCircuitBreaker(cb))
		col := leveeprom.NewCollector(reg)
		defer col.Close()
		status, err := leveestatus.NewHandler(reg)
		require.NoError(t, err)
		defer status.Close()

		counts := func() (actuator int, micrometer float64) {
			rec := httptest.NewRecorder()
			status.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/circuitbreakers/payment", nil))
			var d struct {
				NotPermittedCalls int `json:"notPermittedCalls"`
			}
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &d))
			return d.NotPermittedCalls, value(t, col, leveeprom.CircuitBreakerNotPermittedCalls, map[string]string{"name": "payment"})
		}
		call := func(err error) error {
			_, e := circuitbreaker.Execute(context.Background(), cb, func(context.Context) (int, error) { return 0, err })
			return e
		}
		boom := errors.New("boom")
		require.ErrorIs(t, call(boom), boom)
		require.ErrorIs(t, call(boom), boom)
		require.Equal(t, circuitbreaker.Open, cb.State())
		for range 3 {
			require.ErrorIs(t, call(nil), circuitbreaker.ErrCallNotPermitted)
		}
		a, m := counts()
		assert.Equal(t, []any{3, 3.0}, []any{a, m}, "OPEN: both count the refusals")

		time.Sleep(time.Second + 1)
		require.NoError(t, cb.TransitionToHalfOpenState())
		require.Equal(t, circuitbreaker.HalfOpen, cb.State())
		a, m = counts()
		assert.Equal(t, []any{0, 3.0}, []any{a, m}, "HALF_OPEN: the actuator's count starts again, Micrometer's is cumulative")

		require.NoError(t, cb.TransitionToForcedOpenState())
		for range 2 {
			require.ErrorIs(t, call(nil), circuitbreaker.ErrCallNotPermitted)
		}
		a, m = counts()
		assert.Equal(t, []any{2, 3.0}, []any{a, m}, "FORCED_OPEN: counted by the state's metrics, published as no event")
	})
}

// A collector attached after traffic starts its calls summary from zero, and the decaying
// maximum beside it stays 0 until a call of that kind ends after the attachment: never a
// maximum beside a count of 0.
func TestCollectorAttachedAfterTraffic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := registry.New()
		cb, err := circuitbreaker.New("late", circuitbreaker.Config{})
		require.NoError(t, err)
		require.NoError(t, reg.AddCircuitBreaker(cb))
		boom := errors.New("boom")
		slowFail := func(context.Context) (int, error) { time.Sleep(3 * time.Millisecond); return 0, boom }
		for range 5 {
			_, err := circuitbreaker.Execute(context.Background(), cb, slowFail)
			require.ErrorIs(t, err, boom)
		}
		col := leveeprom.NewCollector(reg)
		defer col.Close()
		failed := map[string]string{"name": "late", "kind": "failed"}
		assert.Equal(t, 0.0, value(t, col, leveeprom.CircuitBreakerCalls, failed))
		assert.Equal(t, 0.0, value(t, col, leveeprom.CircuitBreakerCallsMax, failed))

		_, err = circuitbreaker.Execute(context.Background(), cb, slowFail)
		require.ErrorIs(t, err, boom)
		assert.Equal(t, 1.0, value(t, col, leveeprom.CircuitBreakerCalls, failed))
		assert.Equal(t, 0.003, value(t, col, leveeprom.CircuitBreakerCallsMax, failed))
	})
}
