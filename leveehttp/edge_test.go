package leveehttp_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/circuitbreaker"
	"github.com/levee-go/levee/leveehttp"
	"github.com/levee-go/levee/retry"
)

// A GET answered 503 with Retry-After: 2 and cancelled by its caller at 1s, during the wait,
// returns at once with the caller's context.Canceled, not the earlier 503.
func TestTransportCancelledDuringRetryAfterWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &attempts{}
		s := newServer(t, failing(a, 5, 503, http.Header{"Retry-After": {"2"}}), false)
		b, r := patterns(t, circuitbreaker.Config{}, retry.Config{MaxAttempts: 3})
		client := clientFor(t, s, levee.DefaultPipeline[*http.Response](levee.Patterns{Retry: r, CircuitBreaker: b}, nil), leveehttp.Config{})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		time.AfterFunc(time.Second, cancel)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
		require.NoError(t, err)
		start := time.Now()
		resp, err := client.Do(req)
		assert.Nil(t, resp)
		require.ErrorIs(t, err, context.Canceled)
		var ue interface{ Unwrap() error }
		require.ErrorAs(t, err, &ue)
		assert.Same(t, context.Canceled, ue.Unwrap(), "the cancellation itself, as http.Client wraps it")
		assert.Equal(t, time.Second, time.Since(start))
		assert.Equal(t, 1, a.count())
	})
}

// A retry that cannot finish before the caller's deadline returns the last real answer (the
// last 503) at once, not context.DeadlineExceeded after sleeping into the deadline.
func TestTransportRetryRespectsCallerDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &attempts{}
		s := newServer(t, failing(a, 5, 503, nil), false)
		b, r := patterns(t, circuitbreaker.Config{}, retry.Config{MaxAttempts: 5, WaitDuration: time.Second})
		client := clientFor(t, s, levee.DefaultPipeline[*http.Response](levee.Patterns{Retry: r, CircuitBreaker: b}, nil), leveehttp.Config{})
		ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
		require.NoError(t, err)
		start := time.Now()
		resp, err := client.Do(req)
		require.NoError(t, err)
		assert.Equal(t, 503, resp.StatusCode)
		assert.Equal(t, "busy 3", readAll(t, resp))
		assert.Equal(t, 2*time.Second, time.Since(start), "attempts at 0, 1s and 2s; none could finish after")
		assert.Equal(t, 3, a.count())
		assert.Equal(t, 3, b.Metrics().NumberOfFailedCalls)
	})
}

// A deadline already passed at call time: nothing is sent, the caller gets its deadline.
func TestTransportDeadlinePassedAtCallTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &attempts{}
		s := newServer(t, failing(a, 0, 503, nil), false)
		b, r := patterns(t, circuitbreaker.Config{}, retry.Config{MaxAttempts: 3})
		client := clientFor(t, s, levee.DefaultPipeline[*http.Response](levee.Patterns{Retry: r, CircuitBreaker: b}, nil), leveehttp.Config{})
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
		require.NoError(t, err)
		resp, err := client.Do(req)
		assert.Nil(t, resp)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 0, a.count())
		assert.Equal(t, 0, b.Metrics().NumberOfBufferedCalls)
	})
}

// onceReader is a body without GetBody, of unknown length.
type onceReader struct{ io.Reader }

func (onceReader) Close() error { return nil }

// A POST whose body cannot be replayed and whose connection resets is not retried; the caller
// gets a *NotReplayableError saying so, matching ErrNotReplayable (not only ErrNotRetryable,
// which 4xx answers match) and wrapping the transport's own error.
func TestTransportNotReplayableConnectionReset(t *testing.T) {
	for _, tc := range []struct {
		name   string
		method string
		body   func() io.Reader
		reason string
	}{
		{"body of unknown length without GetBody", http.MethodPut, func() io.Reader { return onceReader{strings.NewReader("order")} },
			"its body cannot be sent again (the request has no GetBody)"},
		{"POST without a key", http.MethodPost, func() io.Reader { return strings.NewReader("order") },
			"its method POST is not idempotent and the request has no Idempotency-Key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var n atomic.Int64
				s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					n.Add(1)
					io.ReadAll(r.Body)
					if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
						conn.Close() // reset: no answer at all
					}
				}), false)
				b, r := patterns(t, circuitbreaker.Config{}, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
				client := clientFor(t, s, levee.DefaultPipeline[*http.Response](levee.Patterns{Retry: r, CircuitBreaker: b}, nil), leveehttp.Config{})
				req, err := http.NewRequest(tc.method, s.URL+"/charge", tc.body())
				require.NoError(t, err)
				resp, err := client.Do(req)
				assert.Nil(t, resp)
				require.ErrorIs(t, err, leveehttp.ErrNotReplayable)
				require.ErrorIs(t, err, leveehttp.ErrNotRetryable)
				require.ErrorIs(t, err, io.EOF)
				var nre *leveehttp.NotReplayableError
				require.ErrorAs(t, err, &nre)
				assert.Equal(t, tc.method, nre.Method)
				assert.Equal(t, tc.reason, nre.Reason)
				assert.Equal(t, "leveehttp: "+tc.method+" "+s.URL+"/charge not retried: "+tc.reason+": "+nre.Err.Error(), nre.Error())
				assert.Equal(t, int64(1), n.Load(), "sent once")
				assert.Equal(t, 1, b.Metrics().NumberOfFailedCalls)
			})
		})
	}
}

// A 4xx answer does not match ErrNotReplayable.
func TestClientErrorIsNotNotReplayable(t *testing.T) {
	assert.NotErrorIs(t, &leveehttp.StatusError{StatusCode: 404}, leveehttp.ErrNotReplayable)
}

// Each attempt carries its number in X-Envoy-Attempt-Count, replacing the caller's; a request
// body of unknown length with GetBody is replayed on each.
func TestTransportSendsAttemptCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var got [][]string
		var bodies []string
		s := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			got = append(got, r.Header.Values("X-Envoy-Attempt-Count"))
			bodies = append(bodies, string(body))
			n := len(got)
			mu.Unlock()
			if n < 3 {
				w.WriteHeader(503)
			}
		}), false)
		_, r := patterns(t, circuitbreaker.Config{}, retry.Config{MaxAttempts: 3, WaitDuration: retry.NoWait})
		client := clientFor(t, s, levee.Compose[*http.Response]().WithRetry(r), leveehttp.Config{})
		req, err := http.NewRequest(http.MethodPut, s.URL, onceReader{strings.NewReader("stock")})
		require.NoError(t, err)
		req.GetBody = func() (io.ReadCloser, error) { return onceReader{strings.NewReader("stock")}, nil }
		req.Header.Set("X-Envoy-Attempt-Count", "7")
		resp, err := client.Do(req)
		require.NoError(t, err)
		assert.Equal(t, 200, resp.StatusCode)
		readAll(t, resp)
		assert.Equal(t, [][]string{{"1"}, {"2"}, {"3"}}, got)
		assert.Equal(t, []string{"stock", "stock", "stock"}, bodies)
		assert.Equal(t, "7", req.Header.Get("X-Envoy-Attempt-Count"), "the caller's request is not modified")

		got = nil
		client = clientFor(t, s, nil, leveehttp.Config{OmitAttemptCount: true})
		resp, err = client.Get(s.URL)
		require.NoError(t, err)
		readAll(t, resp)
		assert.Equal(t, [][]string{nil}, got)

		got = nil
		client = clientFor(t, s, nil, leveehttp.Config{AttemptCountHeader: "x-levee-attempt"})
		resp, err = client.Get(s.URL)
		require.NoError(t, err)
		readAll(t, resp)
		assert.Equal(t, [][]string{nil}, got)
	})
}

func TestNewTransportRefusesInvalidAttemptCountHeader(t *testing.T) {
	_, err := leveehttp.NewTransport(nil, nil, leveehttp.Config{AttemptCountHeader: "bad header"})
	assert.EqualError(t, err, `leveehttp: AttemptCountHeader must be a valid header name, got "bad header"`)
}
