package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/examples/payment"
	"github.com/levee-go/levee/leveeprom"
)

// scrape GETs /metrics from srv over HTTP and returns its sample lines.
func scrape(t *testing.T, srv *httptest.Server) []string {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); !strings.HasPrefix(line, "#") {
			lines = append(lines, line)
		}
	}
	require.NoError(t, sc.Err())
	return lines
}

// The scenario's figures, as the client saw them and as Prometheus scrapes them.
func TestScrapeAfterTheScenario(t *testing.T) {
	a, err := newApp()
	require.NoError(t, err)
	defer a.Close()
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()

	res := a.runScenario(context.Background())
	assert.Equal(t, 5, res.Failed)
	assert.Equal(t, 3, res.NotPermitted)
	assert.Equal(t, circuitbreaker.Open, res.State)
	assert.Equal(t, int64(5), res.Received, "the gateway received only the five calls the breaker let through")
	require.ErrorIs(t, res.PriceErr, payment.ErrGateway)

	lines := scrape(t, srv)
	for _, want := range []string{
		`resilience4j_circuitbreaker_state{name="payment",state="open",team="checkout"} 1`,
		`resilience4j_circuitbreaker_state{name="payment",state="closed",team="checkout"} 0`,
		`resilience4j_circuitbreaker_calls_seconds_count{kind="failed",name="payment",team="checkout"} 5`,
		`resilience4j_circuitbreaker_calls_seconds_count{kind="successful",name="payment",team="checkout"} 0`,
		`resilience4j_circuitbreaker_not_permitted_calls_total{kind="not_permitted",name="payment",team="checkout"} 3`,
		`resilience4j_circuitbreaker_buffered_calls{kind="failed",name="payment",team="checkout"} 5`,
		`resilience4j_circuitbreaker_failure_rate{name="payment",team="checkout"} 100`,
		`resilience4j_retry_calls_total{kind="failed_with_retry",name="pricing",team=""} 1`,
		`resilience4j_bulkhead_available_concurrent_calls{name="payment",team=""} 10`,
		`resilience4j_bulkhead_max_allowed_concurrent_calls{name="payment",team=""} 10`,
	} {
		assert.Contains(t, lines, want)
	}
	assert.Len(t, lines, 19+2+2+4+3, "19 series of the breaker, 2 of the bulkhead, 2 of the limiter, 4 of the retry, and the summary's 3 _sum lines")

	// The status API, on the same server, shows the same figures.
	code, body := get(t, srv, "/levee/circuitbreakers")
	assert.Equal(t, http.StatusOK, code)
	const details = `{"failureRate":100,"failureRateThreshold":50,"slowCallRate":0,"slowCallRateThreshold":100,` +
		`"bufferedCalls":5,"failedCalls":5,"slowCalls":0,"slowFailedCalls":0,"notPermittedCalls":3,"state":"OPEN"}`
	assert.JSONEq(t, `{"circuitBreakers":{"payment":`+details+`}}`, body)

	// An open breaker leaves the service UP: the health check answers 200.
	code, body = get(t, srv, "/levee/health")
	assert.Equal(t, http.StatusOK, code)
	assert.JSONEq(t, `{"status":"UP","components":{"payment":{"status":"CIRCUIT_OPEN","details":`+details+`}}}`, body)

	// One lookup failed after its three attempts; numberOfTotalCalls counts the attempts.
	code, body = get(t, srv, "/levee/details/retries")
	assert.Equal(t, http.StatusOK, code)
	assert.JSONEq(t, `{"retries":{"pricing":{"maxAttempts":3,"numberOfSuccessfulCallsWithoutRetryAttempt":0,`+
		`"numberOfSuccessfulCallsWithRetryAttempt":0,"numberOfFailedCallsWithoutRetryAttempt":0,`+
		`"numberOfFailedCallsWithRetryAttempt":1,"numberOfTotalCalls":3}}}`, body)

	// The dashboard is served at the mount's root.
	code, body = get(t, srv, "/levee/")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "<!doctype html>")
}

// get GETs path from srv over HTTP and returns the status code and the body.
func get(t *testing.T, srv *httptest.Server, path string) (int, string) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func TestRunOnce(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), "", true, &out))
	first, rest, _ := strings.Cut(out.String(), "\n")
	assert.Equal(t, "8 calls to the failing gateway: failed 5, not permitted 3, state OPEN, gateway received 5", first)
	assert.Contains(t, rest, "# TYPE resilience4j_circuitbreaker_calls_seconds summary\n")
	assert.Contains(t, rest, `resilience4j_circuitbreaker_not_permitted_calls_total{kind="not_permitted",name="payment",team="checkout"} 3`+"\n")
}

func TestServeUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, "127.0.0.1:0", false, pw)
		_ = pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	require.True(t, sc.Scan())
	require.True(t, sc.Scan())
	serving := regexp.MustCompile(`^serving (http://127\.0\.0\.1:\d+)/metrics and the status API and dashboard at (http://127\.0\.0\.1:\d+)/levee/; interrupt to stop$`).FindStringSubmatch(sc.Text())
	require.Len(t, serving, 3, sc.Text())
	require.Equal(t, serving[1], serving[2])

	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	fetch := func(path string) string {
		resp, err := client.Get(serving[1] + path)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		return string(body)
	}
	assert.Contains(t, fetch("/metrics"), `resilience4j_circuitbreaker_state{name="payment",state="open",team="checkout"} 1`)
	assert.Contains(t, fetch("/levee/circuitbreakers/payment"), `"state":"OPEN"`)

	cancel()
	require.NoError(t, <-done)
	_, _ = io.Copy(io.Discard, pr)
}

// The dashboard is valid JSON, each of its queries names only families the collector exports
// (a summary's through its _count and _sum series), and it covers the figures a Resilience4j
// board shows.
func TestGrafanaDashboard(t *testing.T) {
	raw, err := os.ReadFile("grafana-dashboard.json")
	require.NoError(t, err)
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	require.NoError(t, json.Unmarshal(raw, &dash))
	require.NotEmpty(t, dash.Panels)

	known := map[string]bool{}
	for _, f := range leveeprom.Families() {
		known[f] = true
	}
	known[leveeprom.CircuitBreakerCalls+"_count"] = true
	known[leveeprom.CircuitBreakerCalls+"_sum"] = true
	delete(known, leveeprom.CircuitBreakerCalls) // a summary is queried through its series

	metric := regexp.MustCompile(`resilience4j_[a-z_]+`)
	var used []string
	check := func(where, expr string) {
		names := metric.FindAllString(expr, -1)
		assert.NotEmpty(t, names, "%s: %q names no family", where, expr)
		for _, n := range names {
			assert.True(t, known[n], "%s: %q is not a family the collector exports", where, n)
			used = append(used, n)
		}
	}
	for _, p := range dash.Panels {
		require.NotEmpty(t, p.Targets, p.Title)
		for _, tg := range p.Targets {
			check(p.Title, tg.Expr)
		}
	}
	for _, v := range dash.Templating.List {
		check("variable", v.Definition)
	}
	for _, want := range []string{
		leveeprom.CircuitBreakerState,
		leveeprom.CircuitBreakerFailureRate,
		leveeprom.CircuitBreakerCalls + "_count",
		leveeprom.CircuitBreakerNotPermittedCalls,
		leveeprom.RetryCalls,
		leveeprom.BulkheadAvailableConcurrentCalls,
		leveeprom.RateLimiterAvailablePermissions,
	} {
		assert.True(t, slices.Contains(used, want), "no panel shows %s", want)
	}
}
