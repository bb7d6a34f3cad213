package leveestatus_test

import (
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/leveestatus"
)

const (
	paymentJSON = `{"failureRate":62.5,"failureRateThreshold":70,"slowCallRate":12.5,"slowCallRateThreshold":100,
		"bufferedCalls":8,"failedCalls":5,"slowCalls":1,"slowFailedCalls":1,"notPermittedCalls":0,"state":"CLOSED"}`
	stockJSON = `{"failureRate":100,"failureRateThreshold":50,"slowCallRate":0,"slowCallRateThreshold":100,
		"bufferedCalls":4,"failedCalls":4,"slowCalls":0,"slowFailedCalls":0,"notPermittedCalls":1,"state":"OPEN"}`
	t0 = "2000-01-01T00:00:00Z"
	t2 = "2000-01-01T00:00:02Z"
	t3 = "2000-01-01T00:00:03Z"
)

func TestCircuitBreakers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScenario(t)
		assert.JSONEq(t, `{"circuitBreakers":{"payment":`+paymentJSON+`,"stock":`+stockJSON+`}}`, get(t, s.h, "/circuitbreakers"))
		assert.JSONEq(t, paymentJSON, get(t, s.h, "/circuitbreakers/payment"))
		assert.JSONEq(t, stockJSON, get(t, s.h, "/circuitbreakers/stock"))

		code, ct, body := do(t, s.h, http.MethodGet, "/circuitbreakers/nope", "")
		assert.Equal(t, http.StatusNotFound, code)
		assert.Equal(t, "application/json", ct)
		assert.JSONEq(t, `{"status":404,"error":"Not Found","message":"leveestatus: no circuitbreaker named \"nope\"",
			"path":"/circuitbreakers/nope"}`, body)
	})
}

func TestCircuitBreakerBeforeMinimumCallsHasRatesMinusOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScenario(t)
		require.NoError(t, s.payment.TransitionToClosedState())
		assert.JSONEq(t, `{"failureRate":-1,"failureRateThreshold":70,"slowCallRate":-1,"slowCallRateThreshold":100,
			"bufferedCalls":0,"failedCalls":0,"slowCalls":0,"slowFailedCalls":0,"notPermittedCalls":0,"state":"CLOSED"}`,
			get(t, s.h, "/circuitbreakers/payment"))
	})
}

func cbEvent(name, typ, at, extra string) string {
	return `{"circuitBreakerName":"` + name + `","type":"` + typ + `","creationTime":"` + at + `"` + extra + `}`
}

func TestCircuitBreakerEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScenario(t)
		stockErr := cbEvent("stock", "ERROR", t0, `,"errorMessage":"stock down","durationInMs":0`)
		stock := []string{stockErr, stockErr, stockErr, stockErr,
			cbEvent("stock", "FAILURE_RATE_EXCEEDED", t0, ""),
			cbEvent("stock", "STATE_TRANSITION", t0, `,"stateTransition":"CLOSED_TO_OPEN"`),
			cbEvent("stock", "NOT_PERMITTED", t0, "")}
		payErr := cbEvent("payment", "ERROR", t0, `,"errorMessage":"card declined","durationInMs":0`)
		payOK := cbEvent("payment", "SUCCESS", t0, `,"durationInMs":0`)
		payment := []string{payErr, payOK, payErr, payOK, payErr, payOK,
			cbEvent("payment", "ERROR", t2, `,"errorMessage":"card declined","durationInMs":2000`),
			cbEvent("payment", "ERROR", t2, `,"errorMessage":"card declined","durationInMs":0`)}

		list := func(evs ...string) string {
			out := `{"circuitBreakerEvents":[`
			for i, e := range evs {
				if i > 0 {
					out += ","
				}
				out += e
			}
			return out + "]}"
		}
		assert.JSONEq(t, list(stock...), get(t, s.h, "/circuitbreakerevents/stock"))
		assert.JSONEq(t, list(payment...), get(t, s.h, "/circuitbreakerevents/payment"))
		// Every breaker's events, by creation time; at the same instant by breaker name.
		all := append(append(append([]string{}, payment[:6]...), stock...), payment[6:]...)
		assert.JSONEq(t, list(all...), get(t, s.h, "/circuitbreakerevents"))
		assert.JSONEq(t, list(payErr, payErr, payErr, payment[6], payment[7]), get(t, s.h, "/circuitbreakerevents/payment/ERROR"))
		// The event type is matched whatever its case, as Resilience4j's endpoint.
		assert.JSONEq(t, list(stock[5]), get(t, s.h, "/circuitbreakerevents/stock/state_transition"))
		assert.JSONEq(t, list(), get(t, s.h, "/circuitbreakerevents/payment/RESET"))

		code, _, body := do(t, s.h, http.MethodGet, "/circuitbreakerevents/stock/BROKEN", "")
		assert.Equal(t, http.StatusBadRequest, code, "as Spring answers a path variable it cannot convert")
		assert.JSONEq(t, `{"status":400,"error":"Bad Request","path":"/circuitbreakerevents/stock/BROKEN",
			"message":"leveestatus: no circuitbreaker event type \"BROKEN\"; the types are SUCCESS, ERROR, IGNORED_ERROR, NOT_PERMITTED, STATE_TRANSITION, RESET, FAILURE_RATE_EXCEEDED, SLOW_CALL_RATE_EXCEEDED"}`, body)
		code, _, body = do(t, s.h, http.MethodGet, "/circuitbreakerevents/nope", "")
		assert.Equal(t, http.StatusNotFound, code)
		assert.JSONEq(t, `{"status":404,"error":"Not Found","path":"/circuitbreakerevents/nope",
			"message":"leveestatus: no circuitbreaker named \"nope\""}`, body)
		code, _, _ = do(t, s.h, http.MethodGet, "/circuitbreakerevents/nope/ERROR", "")
		assert.Equal(t, http.StatusNotFound, code)
	})
}

func TestRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScenario(t)
		assert.JSONEq(t, `{"retries":{"payment":{"maxAttempts":3,"numberOfSuccessfulCallsWithoutRetryAttempt":1,
			"numberOfSuccessfulCallsWithRetryAttempt":1,"numberOfFailedCallsWithoutRetryAttempt":0,
			"numberOfFailedCallsWithRetryAttempt":1,"numberOfTotalCalls":7}}}`, get(t, s.h, "/details/retries"))
		ev := func(typ, msg string, n int) string {
			return `{"retryName":"payment","type":"` + typ + `","creationTime":"` + t2 + `","errorMessage":"` + msg +
				`","numberOfAttempts":` + string(rune('0'+n)) + `}`
		}
		all := `{"retryEvents":[` + ev("RETRY", "timeout 1", 1) + "," + ev("RETRY", "timeout 2", 2) + "," +
			ev("SUCCESS", "timeout 2", 2) + "," + ev("RETRY", "card declined", 1) + "," +
			ev("RETRY", "card declined", 2) + "," + ev("ERROR", "card declined", 3) + `]}`
		assert.JSONEq(t, all, get(t, s.h, "/retryevents"))
		assert.JSONEq(t, all, get(t, s.h, "/retryevents/payment"))
		assert.JSONEq(t, `{"retryEvents":[`+ev("ERROR", "card declined", 3)+`]}`, get(t, s.h, "/retryevents/payment/ERROR"))
		code, _, _ := do(t, s.h, http.MethodGet, "/retryevents/stock", "")
		assert.Equal(t, http.StatusNotFound, code)
		code, _, _ = do(t, s.h, http.MethodGet, "/retryevents/payment/NOT_PERMITTED", "")
		assert.Equal(t, http.StatusBadRequest, code)
	})
}

// /retries, /bulkheads, /ratelimiters and /timelimiters list names, as Resilience4j's
// endpoints (its BulkheadEndpoint lists both kinds of bulkhead in one sorted list).
func TestNameListsAsResilience4j(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScenario(t)
		assert.JSONEq(t, `{"retries":["payment"]}`, get(t, s.h, "/retries"))
		assert.JSONEq(t, `{"bulkheads":["db","jobs"]}`, get(t, s.h, "/bulkheads"))
		assert.JSONEq(t, `{"rateLimiters":["api"]}`, get(t, s.h, "/ratelimiters"))
		assert.JSONEq(t, `{"timeLimiters":["quote"]}`, get(t, s.h, "/timelimiters"))
	})
}

func TestBulkheadsRateLimitersTimeLimiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScenario(t)
		assert.JSONEq(t, `{"bulkheads":{"db":{"availableConcurrentCalls":2,"maxAllowedConcurrentCalls":2,
			"numberOfWaitingCalls":0,"maxWaitDurationInMs":0}},
			"threadPoolBulkheads":{"jobs":{"coreThreadPoolSize":1,"maximumThreadPoolSize":1,"threadPoolSize":0,
			"activeThreadCount":0,"availableThreadCount":1,"queueDepth":0,"queueCapacity":2,"remainingQueueCapacity":2}}}`,
			get(t, s.h, "/details/bulkheads"))
		assert.JSONEq(t, `{"bulkheadEvents":[{"bulkheadName":"db","type":"CALL_PERMITTED","creationTime":"`+t2+`"},
			{"bulkheadName":"db","type":"CALL_FINISHED","creationTime":"`+t2+`"}]}`, get(t, s.h, "/bulkheadevents/db"))
		assert.JSONEq(t, `{"bulkheadEvents":[]}`, get(t, s.h, "/bulkheadevents/jobs"))

		// The limiter's cycle is 1s: at 00:00:03 the three permissions taken at 00:00:02 are back.
		assert.JSONEq(t, `{"rateLimiters":{"api":{"availablePermissions":10,"numberOfWaitingThreads":0,
			"limitForPeriod":10,"limitRefreshPeriodInMs":1000,"timeoutDurationInMs":0}}}`, get(t, s.h, "/details/ratelimiters"))
		acq := `{"rateLimiterName":"api","type":"SUCCESSFUL_ACQUIRE","creationTime":"` + t2 + `"}`
		assert.JSONEq(t, `{"rateLimiterEvents":[`+acq+","+acq+","+acq+`]}`, get(t, s.h, "/ratelimiterevents/api/successful_acquire"))
		assert.JSONEq(t, `{"rateLimiterEvents":[]}`, get(t, s.h, "/ratelimiterevents/api/DRAINED"))

		assert.JSONEq(t, `{"timeLimiters":{"quote":{"timeoutDurationInMs":1000,"numberOfSuccessfulCalls":1,
			"numberOfFailedCalls":0,"numberOfTimedOutCalls":1,"numberOfAbandonedCalls":0}}}`, get(t, s.h, "/details/timelimiters"))
		assert.JSONEq(t, `{"timeLimiterEvents":[{"timeLimiterName":"quote","type":"SUCCESS","creationTime":"`+t2+`"},
			{"timeLimiterName":"quote","type":"TIMEOUT","creationTime":"`+t3+`"}]}`, get(t, s.h, "/timelimiterevents"))
	})
}

func TestWrongMethodIs405(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScenario(t)
		for _, c := range []struct{ method, path string }{
			{http.MethodPost, "/circuitbreakers"},
			{http.MethodDelete, "/circuitbreakers/payment"},
			{http.MethodPut, "/circuitbreakers/payment"},
			{http.MethodPost, "/retries"},
			{http.MethodPost, "/health"},
			{http.MethodPost, "/circuitbreakerevents/stock"},
			{http.MethodPost, "/stream"},
			{http.MethodPost, "/"},
		} {
			code, _, _ := do(t, s.h, c.method, c.path, "")
			assert.Equal(t, http.StatusMethodNotAllowed, code, "%s %s", c.method, c.path)
		}
	})
}

func TestEventRingKeepsTheLastEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScenario(t, leveestatus.EventConsumerBufferSize(2))
		assert.JSONEq(t, `{"circuitBreakerEvents":[`+
			cbEvent("stock", "STATE_TRANSITION", t0, `,"stateTransition":"CLOSED_TO_OPEN"`)+","+
			cbEvent("stock", "NOT_PERMITTED", t0, "")+`]}`, get(t, s.h, "/circuitbreakerevents/stock"))
	})
}
