package leveeprom_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveeprom"
	"github.com/levee-go/levee/registry"
)

// Three lines wire levee's metrics to Prometheus: a registry of the application's own, the
// collector registered on it, and the handler serving it (here on a mux of the example's own;
// an application may use http.Handle).
func Example() {
	levreg := registry.New()
	cb, _ := circuitbreaker.New("payment", circuitbreaker.Config{
		SlidingWindowSize: 5, MinimumNumberOfCalls: 5, FailureRateThreshold: 50,
	})
	_ = levreg.AddCircuitBreaker(cb)

	reg := prometheus.NewRegistry()
	reg.MustRegister(leveeprom.NewCollector(levreg))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))

	// Eight calls to a gateway that fails: five failures open the breaker, three are refused.
	for range 8 {
		_, _ = circuitbreaker.Execute(context.Background(), cb, func(context.Context) (string, error) {
			return "", errors.New("gateway 503")
		})
	}

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	lines := bufio.NewScanner(rec.Body)
	for lines.Scan() {
		line := lines.Text()
		if strings.HasSuffix(line, "} 0") || strings.HasPrefix(line, "#") ||
			strings.Contains(line, "_sum{") || strings.Contains(line, "_max{") {
			continue // zeros, comments and durations, which vary from run to run
		}
		fmt.Println(line)
	}
	// Output:
	// resilience4j_circuitbreaker_buffered_calls{kind="failed",name="payment"} 5
	// resilience4j_circuitbreaker_calls_seconds_count{kind="failed",name="payment"} 5
	// resilience4j_circuitbreaker_failure_rate{name="payment"} 100
	// resilience4j_circuitbreaker_not_permitted_calls_total{kind="not_permitted",name="payment"} 3
	// resilience4j_circuitbreaker_state{name="payment",state="open"} 1
}
