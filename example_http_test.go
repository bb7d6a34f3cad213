package levee_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/fallback"
	"github.com/levee-go/levee/retry"
)

// StatusError is what the call returns for a 5xx answer, so that retry and the breaker see a
// failure: guard a function that reads and closes the body and returns a value, not the
// *http.Response itself, and no body is left open whatever the pipeline decides.
type StatusError struct{ Code int }

func (e *StatusError) Error() string { return fmt.Sprintf("HTTP %d", e.Code) }

// Guarding an HTTP call: the call turns 5xx answers into errors and always closes the body;
// 4xx answers are the caller's fault, so the breaker ignores them and the retry does not retry
// them (a predicate on the typed error), and the fallback answers only for server failures.
func Example_http() {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) <= 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable) // two failures, then healthy
			return
		}
		io.WriteString(w, "price=1999")
	}))
	defer srv.Close()
	client := srv.Client()
	defer client.CloseIdleConnections()

	clientError := func(err error) bool {
		se, ok := err.(*StatusError)
		return ok && se.Code < 500
	}
	// Configs written here as literals: levee.Must stops the program if one is invalid.
	cb := levee.Must(circuitbreaker.New("pricing", circuitbreaker.Config{
		SlidingWindowSize: 10, MinimumNumberOfCalls: 5, IgnoreErrorPredicate: clientError,
	}))
	rt := levee.Must(retry.New("pricing", retry.Config{
		MaxAttempts: 3, WaitDuration: retry.NoWait,
		RetryOnErrorPredicate: func(err error) bool { return !clientError(err) },
	}))
	stale := levee.Must(fallback.New("pricing", fallback.OnType(func(ctx context.Context, err *StatusError) (string, error) {
		return "price=1899 (stale)", nil
	})))
	pricing := levee.DefaultPipeline(levee.Patterns{Retry: rt, CircuitBreaker: cb}, stale)

	get := func(ctx context.Context, url string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return "", err
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return "", err
		}
		if resp.StatusCode >= 400 {
			return "", &StatusError{Code: resp.StatusCode}
		}
		return string(body), nil
	}
	price, outcome, err := pricing.ExecuteOutcome(context.Background(), func(ctx context.Context) (string, error) {
		return get(ctx, srv.URL)
	})
	fmt.Println(price, outcome.Fallback, err, "after", hits.Load(), "requests")
	m := cb.Metrics()
	fmt.Println("breaker recorded", m.NumberOfFailedCalls, "failures and", m.NumberOfSuccessfulCalls, "success")
	// Output:
	// price=1999 false <nil> after 3 requests
	// breaker recorded 2 failures and 1 success
}
