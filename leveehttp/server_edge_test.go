package leveehttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee/leveehttp"
	"github.com/levee-go/levee/retry"
)

// Timeout 100ms around a handler that ignores its context for 1s: the client gets its 503 at
// 100ms, over a real HTTP exchange, and what the handler writes at 1s is discarded.
func TestMiddlewareTimeoutAnswersAtTheLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		wrote := make(chan error, 1)
		h := middleware(t, leveehttp.ServerConfig{Timeout: 100 * time.Millisecond},
			http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(time.Second)
				_, err := io.WriteString(w, "late")
				wrote <- err
			}))
		s := newServer(t, h, false)
		start := time.Now()
		resp, err := (&http.Client{Transport: s.client}).Get(s.URL)
		require.NoError(t, err)
		assert.Equal(t, 100*time.Millisecond, time.Since(start))
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		assert.Equal(t, "service unavailable: request timed out\n", readAll(t, resp))
		assert.Equal(t, http.ErrHandlerTimeout, <-wrote)
		assert.Equal(t, time.Second, time.Since(start))
	})
}

// A panic of a handler the time limit already answered goes to OnPanic, and nowhere else.
func TestMiddlewarePanicAfterTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		seen := make(chan any, 1)
		h := middleware(t, leveehttp.ServerConfig{Timeout: time.Second, OnPanic: func(_ *http.Request, v any, _ []byte) { seen <- v }},
			http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(2 * time.Second)
				panic("late boom")
			}))
		w := serveOne(h)
		assert.Equal(t, http.StatusServiceUnavailable, w.Code)
		assert.Equal(t, "late boom", <-seen)
	})
}

// A panic before the limit is answered 500 as without a time limit.
func TestMiddlewarePanicWithTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen any
		h := middleware(t, leveehttp.ServerConfig{Timeout: time.Second, OnPanic: func(_ *http.Request, v any, _ []byte) { seen = v }},
			http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic("boom") }))
		w := serveOne(h)
		assert.Equal(t, http.StatusInternalServerError, w.Code)
		assert.Equal(t, "boom", seen)
		assert.Panics(t, func() {
			serveOne(middleware(t, leveehttp.ServerConfig{Timeout: time.Second},
				http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) })))
		})
	})
}

// The caller's attempt number reaches the handler's context; a missing, repeated, negative or
// malformed value gives none.
func TestMiddlewareIncomingAttempt(t *testing.T) {
	for _, tc := range []struct {
		values []string
		want   int
	}{
		{nil, 0},
		{[]string{"1"}, 1},
		{[]string{"3"}, 3},
		{[]string{"2", "3"}, 0},
		{[]string{"-1"}, 0},
		{[]string{"0"}, 0},
		{[]string{"two"}, 0},
		{[]string{"99999999999999999999999"}, 0},
	} {
		got := -1
		h := middleware(t, leveehttp.ServerConfig{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got = retry.IncomingAttempt(r.Context())
		}))
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header["X-Envoy-Attempt-Count"] = tc.values
		h.ServeHTTP(httptest.NewRecorder(), req)
		assert.Equal(t, tc.want, got, "%q", tc.values)
	}
	got := 0
	h := middleware(t, leveehttp.ServerConfig{AttemptCountHeader: "x-levee-attempt"}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = retry.IncomingAttempt(r.Context())
	}))
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("X-Levee-Attempt", "2")
	h.ServeHTTP(httptest.NewRecorder(), req)
	assert.Equal(t, 2, got)
	_, err := leveehttp.Middleware(leveehttp.ServerConfig{AttemptCountHeader: "a b"})
	assert.EqualError(t, err, `leveehttp: AttemptCountHeader must be a valid header name, got "a b"`)
}
