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
	"github.com/levee-go/levee/leveehttp"
	"github.com/levee-go/levee/retry"
)

// Two levee services on loopback: a client retries calls to the front service 3 times, which
// retries its calls to the back service 3 times; the back service always answers 503. Without
// NoRetryOfRetries the back service receives 3 × 3 = 9 attempts; with it, the front service
// retries only the client's first attempt and makes one attempt for each retry: 3 + 1 + 1.
func TestRetriesDoNotStackAcrossServices(t *testing.T) {
	for _, tc := range []struct {
		name     string
		noStack  bool
		back     int
		incoming []int // the attempt numbers the back service saw (0: a first attempt, which carries none)
	}{
		{"stacking", false, 9, []int{0, 2, 3, 0, 2, 3, 0, 2, 3}},
		{"NoRetryOfRetries", true, 5, []int{0, 2, 3, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var seen []int
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
			client := &http.Client{Transport: levee.Must(leveehttp.NewTransport(front.Client().Transport,
				levee.Compose[*http.Response]().WithRetry(edgeRetry), leveehttp.Config{}))}
			req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, front.URL, nil)
			require.NoError(t, err)
			resp, err := client.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)

			mu.Lock()
			defer mu.Unlock()
			assert.Len(t, seen, tc.back)
			assert.Equal(t, tc.incoming, seen)
			assert.Equal(t, int64(3), edgeRetry.Metrics().NumberOfTotalCalls, "the client made 3 attempts")
			frontClient.CloseIdleConnections()
			client.CloseIdleConnections()
		})
	}
}
