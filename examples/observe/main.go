// Command observe runs the payment scenario against a failing gateway and serves what levee
// observes of it: the metrics for Prometheus at /metrics, under Resilience4j's Micrometer
// names, so that the Grafana dashboard beside this file (grafana-dashboard.json) shows them,
// and under /levee/ the status API in the shapes of Resilience4j's actuator endpoints
// (/levee/circuitbreakers, /levee/health, ...) and the live dashboard page (/levee/).
//
//	go run ./examples/observe -addr 127.0.0.1:9464
//
// The scenario: a payment client calls a real HTTP gateway on 127.0.0.1 (examples/payment's)
// that answers 503, through a rate limiter, a bulkhead and a circuit breaker (COUNT_BASED
// window 5, MinimumNumberOfCalls 5, FailureRateThreshold 50). Eight calls: the first five
// reach the gateway and fail, which opens the breaker; the last three are not permitted. A
// price lookup through a retry (three attempts, no wait) fails after its retries. A scrape then
// shows resilience4j_circuitbreaker_state{state="open"} 1,
// resilience4j_circuitbreaker_calls_seconds_count{kind="failed"} 5 and
// resilience4j_circuitbreaker_not_permitted_calls_total 3, and GET /levee/circuitbreakers the
// same figures (state OPEN, failedCalls 5, notPermittedCalls 3); GET /levee/health answers 200
// with the breaker's component CIRCUIT_OPEN, since an open breaker does not make the service
// unhealthy. The program serves until interrupted; with -once it prints the scrape and exits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/examples/payment"
	"github.com/levee-go/levee/leveeprom"
	"github.com/levee-go/levee/leveestatus"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/registry"
	"github.com/levee-go/levee/retry"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9464", "address to serve /metrics and /levee/ on")
	once := flag.Bool("once", false, "print one scrape of /metrics and exit instead of serving")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *addr, *once, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "observe:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, addr string, once bool, out io.Writer) error {
	a, err := newApp()
	if err != nil {
		return err
	}
	defer a.Close()
	res := a.runScenario(ctx)
	fmt.Fprintf(out, "8 calls to the failing gateway: failed %d, not permitted %d, state %s, gateway received %d\n",
		res.Failed, res.NotPermitted, res.State, res.Received)
	if once {
		rec := httptest.NewRecorder()
		a.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		_, err := io.Copy(out, rec.Body)
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 5 * time.Second}
	fmt.Fprintf(out, "serving http://%s/metrics and the status API and dashboard at http://%[1]s/levee/; interrupt to stop\n", ln.Addr())
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// app is the service: a payment client, its patterns in a levee registry, the Prometheus
// registry serving their metrics and the status handler serving their state.
type app struct {
	gw        *payment.Gateway
	client    *payment.Client
	levreg    *registry.Registry
	collector *leveeprom.Collector
	metrics   http.Handler
	status    *leveestatus.Handler

	cb *circuitbreaker.CircuitBreaker
	bh *bulkhead.Bulkhead
	rl *ratelimiter.RateLimiter
	rt *retry.Retry
}

func newApp() (*app, error) {
	gw, err := payment.Start()
	if err != nil {
		return nil, err
	}
	a := &app{gw: gw, client: payment.NewClient(gw.URL()), levreg: registry.New()}
	if err := a.build(); err != nil {
		a.Close()
		return nil, err
	}
	reg := prometheus.NewRegistry()
	a.collector = leveeprom.NewCollector(a.levreg, leveeprom.WithTagKeys("team"))
	if err := reg.Register(a.collector); err != nil {
		a.Close()
		return nil, err
	}
	a.metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	if a.status, err = leveestatus.NewHandler(a.levreg); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// build creates the patterns and registers them, tagged with the owning team.
func (a *app) build() (err error) {
	if a.cb, err = circuitbreaker.New("payment", circuitbreaker.Config{
		SlidingWindowType:    circuitbreaker.CountBased,
		SlidingWindowSize:    5,
		MinimumNumberOfCalls: 5,
		FailureRateThreshold: 50,
	}); err != nil {
		return err
	}
	if a.bh, err = bulkhead.New("payment", bulkhead.Config{MaxConcurrentCalls: 10}); err != nil {
		return err
	}
	if a.rl, err = ratelimiter.New("payment", ratelimiter.Config{LimitForPeriod: 50, LimitRefreshPeriod: time.Second}); err != nil {
		return err
	}
	if a.rt, err = retry.New("pricing", retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait}); err != nil {
		return err
	}
	return errors.Join(
		a.levreg.AddCircuitBreaker(a.cb),
		a.levreg.AddBulkhead(a.bh),
		a.levreg.AddRateLimiter(a.rl),
		a.levreg.AddRetry(a.rt),
		a.levreg.SetTags(registry.CircuitBreaker, "payment", map[string]string{"team": "checkout"}),
	)
}

// Handler serves /metrics, and the status API and the dashboard under /levee/.
func (a *app) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", a.metrics)
	mux.Handle("/levee/", http.StripPrefix("/levee", a.status))
	return mux
}

// Close stops the status handler, the collector, the client and the gateway.
func (a *app) Close() {
	if a.status != nil {
		_ = a.status.Close()
	}
	if a.collector != nil {
		a.collector.Close()
	}
	a.client.Close()
	_ = a.gw.Close()
}

// pay charges an order through the rate limiter, the bulkhead and the breaker.
func (a *app) pay(ctx context.Context, order string) (string, error) {
	return ratelimiter.Execute(ctx, a.rl, func(ctx context.Context) (string, error) {
		return bulkhead.Execute(ctx, a.bh, func(ctx context.Context) (string, error) {
			return circuitbreaker.Execute(ctx, a.cb, func(ctx context.Context) (string, error) {
				return a.client.Charge(ctx, order)
			})
		})
	})
}

// result is what the scenario observed from the client's side.
type result struct {
	Failed, NotPermitted int
	State                circuitbreaker.State
	Received             int64 // payments that reached the gateway
	PriceErr             error // the price lookup's error, after its retries
}

// runScenario makes the gateway fail, sends eight payments and one price lookup.
func (a *app) runScenario(ctx context.Context) result {
	a.gw.SetMode(payment.ModeFail)
	var res result
	for range 8 {
		_, err := a.pay(ctx, "DH")
		switch {
		case errors.Is(err, circuitbreaker.ErrCallNotPermitted):
			res.NotPermitted++
		case errors.Is(err, payment.ErrGateway):
			res.Failed++
		}
	}
	res.State = a.cb.State()
	res.Received = a.gw.Received()
	_, res.PriceErr = retry.Execute(ctx, a.rt, func(ctx context.Context) (int64, error) {
		return a.client.Price(ctx, "SKU-1")
	})
	return res
}
