package leveehttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveehttp"
	"github.com/levee-go/levee/retry"
)

// Two levee services on loopback: a client retries calls to the front service 3 times, which
// retries its calls to the back service 3 times; the back service always answers 503. Every
// attempt of a retrying pipeline carries its number (1, 2, 3). Without NoRetryOfRetries the
// back service receives 3 × 3 = 9 attempts; with it, the front service retries none of its
// retrying caller's attempts, the first included: 3 attempts end to end, retried at the
// outermost layer only. A client that does not retry sends no number, and the front service
// retries for it: 3 again.
func TestRetriesDoNotStackAcrossServices(t *testing.T) {
	for _, tc := range []struct {
		name        string
		noStack     bool
		edgeRetries bool
		edge        int   // attempts the client made
		front       []int // the attempt numbers the front service saw (0: none sent)
		back        []int // the attempt numbers the back service saw
	}{
		{"stacking", false, true, 3, []int{1, 2, 3}, []int{1, 2, 3, 1, 2, 3, 1, 2, 3}},
		{"NoRetryOfRetries", true, true, 3, []int{1, 2, 3}, []int{1, 1, 1}},
		{"NoRetryOfRetries, a caller that does not retry", true, false, 1, []int{0}, []int{1, 2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var seen, frontSeen []int
			back := httptest.NewServer(middleware(t, leveehttp.ServerConfig{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				seen = append(seen, retry.IncomingAttempt(r.Context()))
				mu.Unlock()
				http.Error(w, "down", http.StatusServiceUnavailable)
			})))
			defer back.Close()

			frontRetry := levee.Must(retry.New("back", leveehttp.RetryConfig(retry.Config{
				MaxAttempts: 3, WaitDuration: retry.NoWait, NoRetryOfRetries: tc.noStack,
			})))
			frontClient := &http.Client{Transport: levee.Must(leveehttp.NewTransport(back.Client().Transport,
				levee.Compose[*http.Response]().WithRetry(frontRetry), leveehttp.Config{}))}
			front := httptest.NewServer(middleware(t, leveehttp.ServerConfig{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				frontSeen = append(frontSeen, retry.IncomingAttempt(r.Context()))
				mu.Unlock()
				req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, back.URL, nil)
				resp, err := frontClient.Do(req)
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadGateway)
					return
				}
				resp.Body.Close()
				w.WriteHeader(resp.StatusCode)
			})))
			defer front.Close()

			edgeRetry := levee.Must(retry.New("front", leveehttp.RetryConfig(retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})))
			edgePipeline := levee.Compose[*http.Response]().WithRetry(edgeRetry)
			if !tc.edgeRetries {
				edgePipeline = levee.Compose[*http.Response]().WithCircuitBreaker(levee.Must(circuitbreaker.New("front",
					leveehttp.CircuitBreakerConfig(circuitbreaker.Config{}))))
			}
			client := &http.Client{Transport: levee.Must(leveehttp.NewTransport(front.Client().Transport,
				edgePipeline, leveehttp.Config{}))}
			req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, front.URL, nil)
			require.NoError(t, err)
			resp, err := client.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)

			mu.Lock()
			defer mu.Unlock()
			assert.Len(t, frontSeen, tc.edge, "the client's attempts")
			assert.Equal(t, tc.front, frontSeen)
			assert.Len(t, seen, len(tc.back), "the back service's attempts")
			assert.Equal(t, tc.back, seen)
			frontClient.CloseIdleConnections()
			client.CloseIdleConnections()
		})
	}
}
