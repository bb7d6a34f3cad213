package leveehttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveehttp"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
)

// The client in five lines: a breaker and a retry adapted to HTTP, a pipeline, a Transport.
// The server answers 503 twice, then 200: the client sees the 200, after three attempts on one
// connection.
func Example() {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) <= 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "price=1999")
	}))
	defer srv.Close()
	defer srv.Client().CloseIdleConnections()

	cb := levee.Must(circuitbreaker.New("pricing", leveehttp.CircuitBreakerConfig(circuitbreaker.Config{})))
	rt := levee.Must(retry.New("pricing", leveehttp.RetryConfig(retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})))
	p := levee.DefaultPipeline[*http.Response](levee.Patterns{Retry: rt, CircuitBreaker: cb}, nil)
	client := &http.Client{Transport: levee.Must(leveehttp.NewTransport(srv.Client().Transport, p, leveehttp.Config{}))}
	resp, err := client.Get(srv.URL)

	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(body), "after", hits.Load(), "requests")
	m := cb.Metrics()
	fmt.Println("breaker:", m.NumberOfFailedCalls, "failures,", m.NumberOfSuccessfulCalls, "success")
	// Output:
	// 200 price=1999 after 3 requests
	// breaker: 2 failures, 1 success
}

// A POST is retried only with an idempotency key: GenerateIdempotencyKey gives each request
// one, the same on every attempt, so the server can recognise a repeat.
func ExampleConfig_generateIdempotencyKey() {
	var hits atomic.Int64
	var mu sync.Mutex
	keys := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys[r.Header.Get("Idempotency-Key")]++
		mu.Unlock()
		if hits.Add(1) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "order accepted")
	}))
	defer srv.Close()
	defer srv.Client().CloseIdleConnections()

	rt := levee.Must(retry.New("orders", leveehttp.RetryConfig(retry.Config{MaxAttempts: 2, WaitDuration: retry.NoWait})))
	tr := levee.Must(leveehttp.NewTransport(srv.Client().Transport, levee.Compose[*http.Response]().WithRetry(rt),
		leveehttp.Config{GenerateIdempotencyKey: true}))
	client := &http.Client{Transport: tr}

	resp, err := client.Post(srv.URL, "application/json", strings.NewReader(`{"sku":"A1"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	mu.Lock()
	defer mu.Unlock()
	for k, n := range keys {
		fmt.Println(string(body), "after", n, "attempts with one key of", len(k)-2, "hex digits in quotes")
	}
	// Output:
	// order accepted after 2 attempts with one key of 32 hex digits in quotes
}

// A Retry-After longer than the time the caller has left fails the call at once, without
// waiting for a deadline that would come first.
func ExampleRetryAfterError() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30")
		http.Error(w, "maintenance", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	defer srv.Client().CloseIdleConnections()

	rt := levee.Must(retry.New("pricing", leveehttp.RetryConfig(retry.Config{MaxAttempts: 3})))
	tr := levee.Must(leveehttp.NewTransport(srv.Client().Transport, levee.Compose[*http.Response]().WithRetry(rt), leveehttp.Config{}))
	client := &http.Client{Transport: tr}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	_, err := client.Do(req)
	var rae *leveehttp.RetryAfterError
	if errors.As(err, &rae) {
		fmt.Println("retry after", rae.RetryAfter, "is past the deadline:", errors.Is(err, leveehttp.ErrRetryAfter))
	}
	// Output:
	// retry after 30s is past the deadline: true
}

// The server side: a rate limiter of 2 requests per minute answers the third with 429 and the
// limiter's own wait as Retry-After.
func ExampleMiddleware() {
	rl := levee.Must(ratelimiter.New("api", ratelimiter.Config{
		LimitForPeriod: 2, LimitRefreshPeriod: time.Minute, TimeoutDuration: ratelimiter.NoWait,
	}))
	mw := levee.Must(leveehttp.Middleware(leveehttp.ServerConfig{RateLimiter: rl, Timeout: 10 * time.Second}))
	h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))

	for range 3 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/quote", nil))
		fmt.Printf("%d Retry-After: %q\n", w.Code, w.Header().Get("Retry-After"))
	}
	// Output:
	// 200 Retry-After: ""
	// 200 Retry-After: ""
	// 429 Retry-After: "60"
}
