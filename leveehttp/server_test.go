package leveehttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/leveehttp"
	"github.com/levee-go/levee/ratelimiter"
)

func middleware(t *testing.T, cfg leveehttp.ServerConfig, h http.Handler) http.Handler {
	t.Helper()
	mw, err := leveehttp.Middleware(cfg)
	require.NoError(t, err)
	return mw(h)
}

func serveOne(h http.Handler) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	return w
}

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })

// A rate limiter of 1 request per 10s: the refusal's Retry-After is the limiter's own wait,
// rounded up to whole seconds.
func TestMiddlewareRateLimiterRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rl := levee.Must(ratelimiter.New("api", ratelimiter.Config{
			LimitForPeriod: 1, LimitRefreshPeriod: 10 * time.Second, TimeoutDuration: 2 * time.Second,
		}))
		h := middleware(t, leveehttp.ServerConfig{RateLimiter: rl}, okHandler)
		assert.Equal(t, http.StatusOK, serveOne(h).Code)
		w := serveOne(h)
		assert.Equal(t, http.StatusTooManyRequests, w.Code)
		assert.Equal(t, "10", w.Header().Get("Retry-After"))
		time.Sleep(7500 * time.Millisecond)
		w = serveOne(h)
		assert.Equal(t, http.StatusTooManyRequests, w.Code, "2.5s left: more than TimeoutDuration")
		assert.Equal(t, "3", w.Header().Get("Retry-After"))
		time.Sleep(time.Second)
		start := time.Now()
		assert.Equal(t, http.StatusOK, serveOne(h).Code, "1.5s left: the request waits")
		assert.Equal(t, 1500*time.Millisecond, time.Since(start))
	})
}

// A bulkhead of 1: a second request while the first runs gets 503 with Retry-After; every
// permit comes back.
func TestMiddlewareBulkhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bh := levee.Must(bulkhead.New("api", bulkhead.Config{MaxConcurrentCalls: 1}))
		release := make(chan struct{})
		h := middleware(t, leveehttp.ServerConfig{Bulkhead: bh, BulkheadRetryAfter: 1500 * time.Millisecond},
			http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				<-release
				io.WriteString(w, "ok")
			}))
		done := make(chan *httptest.ResponseRecorder)
		go func() { done <- serveOne(h) }()
		synctest.Wait()
		w := serveOne(h)
		assert.Equal(t, http.StatusServiceUnavailable, w.Code)
		assert.Equal(t, "2", w.Header().Get("Retry-After"))
		close(release)
		assert.Equal(t, http.StatusOK, (<-done).Code)
		assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)
	})
}

func TestMiddlewareTimeout(t *testing.T) {
	cases := []struct {
		name    string
		handler func(w http.ResponseWriter, r *http.Request) error
		code    int
		body    string
		werr    error         // the handler's write error
		at      time.Duration // when the answer is complete
	}{
		{name: "honours its context, writes nothing", handler: func(w http.ResponseWriter, r *http.Request) error {
			<-r.Context().Done()
			return nil
		}, code: 503, body: "service unavailable: request timed out\n", at: 2 * time.Second},
		{name: "writes its own error late", handler: func(w http.ResponseWriter, r *http.Request) error {
			<-r.Context().Done()
			w.WriteHeader(http.StatusInternalServerError)
			_, err := io.WriteString(w, "context deadline exceeded")
			return err
		}, code: 503, body: "service unavailable: request timed out\n", werr: http.ErrHandlerTimeout, at: 2 * time.Second},
		{name: "ignores its context", handler: func(w http.ResponseWriter, r *http.Request) error {
			time.Sleep(5 * time.Second)
			w.Header().Set("X-Late", "yes")
			_, err := io.WriteString(w, "late")
			return err
		}, code: 503, body: "service unavailable: request timed out\n", werr: http.ErrHandlerTimeout, at: 2 * time.Second},
		{name: "in time", handler: func(w http.ResponseWriter, r *http.Request) error {
			time.Sleep(time.Second)
			_, err := io.WriteString(w, "ok")
			return err
		}, code: 200, body: "ok", at: time.Second},
		{name: "started in time, finished late", handler: func(w http.ResponseWriter, r *http.Request) error {
			io.WriteString(w, "part ")
			time.Sleep(3 * time.Second)
			_, err := io.WriteString(w, "rest")
			return err
		}, code: 200, body: "part rest", at: 3 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				bh := levee.Must(bulkhead.New("api", bulkhead.Config{MaxConcurrentCalls: 1}))
				werr := make(chan error, 1)
				h := middleware(t, leveehttp.ServerConfig{Bulkhead: bh, Timeout: 2 * time.Second},
					http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { werr <- tc.handler(w, r) }))
				start := time.Now()
				w := serveOne(h)
				assert.Equal(t, tc.at, time.Since(start), "answered at the limit, as http.TimeoutHandler")
				assert.Equal(t, tc.code, w.Code)
				assert.Equal(t, tc.body, w.Body.String())
				assert.Equal(t, tc.werr, <-werr)
				synctest.Wait() // the late handler has returned: its permit is back
				assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)
				assert.Empty(t, w.Header().Get("X-Late"), "a late handler's headers never reach the response")
			})
		})
	}
}

// A panic becomes a 500, OnPanic sees it, and the bulkhead's permit is released.
func TestMiddlewarePanic(t *testing.T) {
	bh := levee.Must(bulkhead.New("api", bulkhead.Config{MaxConcurrentCalls: 1}))
	var seen any
	var stack []byte
	h := middleware(t, leveehttp.ServerConfig{Bulkhead: bh, OnPanic: func(r *http.Request, v any, s []byte) { seen, stack = v, s }},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			panic("boom")
		}))
	w := serveOne(h)
	assert.Equal(t, http.StatusInternalServerError, w.Code)
	assert.Equal(t, "internal server error\n", w.Body.String())
	assert.Equal(t, "text/plain; charset=utf-8", w.Header().Get("Content-Type"), "the handler's headers are dropped")
	assert.Equal(t, "boom", seen)
	assert.Contains(t, string(stack), "server_test.go")
	assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)
}

// http.ErrAbortHandler is panicked again, and a panic after the response started aborts it;
// the permit is released either way.
func TestMiddlewarePanicAborts(t *testing.T) {
	for name, handler := range map[string]http.HandlerFunc{
		"ErrAbortHandler": func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) },
		"after WriteHeader": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			panic("boom")
		},
	} {
		t.Run(name, func(t *testing.T) {
			bh := levee.Must(bulkhead.New("api", bulkhead.Config{MaxConcurrentCalls: 1}))
			h := middleware(t, leveehttp.ServerConfig{Bulkhead: bh}, handler)
			assert.PanicsWithValue(t, http.ErrAbortHandler, func() { serveOne(h) })
			assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)
		})
	}
}

// Over a connection: a request refused by the bulkhead, one that panics, and one aborted by
// the handler; the client gets 503, 500 and an error, and no connection is left open.
func TestMiddlewareOverConnections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bh := levee.Must(bulkhead.New("api", bulkhead.Config{MaxConcurrentCalls: 1}))
		release := make(chan struct{})
		var n atomic.Int64
		h := middleware(t, leveehttp.ServerConfig{Bulkhead: bh}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch n.Add(1) {
			case 1:
				<-release
				io.WriteString(w, "ok")
			case 2:
				panic("boom")
			default:
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler)
			}
		}))
		s := newServer(t, h, false)
		client := &http.Client{Transport: s.client}
		first := make(chan *http.Response)
		go func() {
			resp, err := client.Get(s.URL)
			if err == nil {
				first <- resp
			}
			close(first)
		}()
		synctest.Wait()
		resp, err := client.Get(s.URL)
		require.NoError(t, err)
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		assert.Equal(t, "1", resp.Header.Get("Retry-After"))
		resp.Body.Close()
		close(release)
		resp = <-first
		require.NotNil(t, resp)
		assert.Equal(t, "ok", readAll(t, resp))

		resp, err = client.Get(s.URL)
		require.NoError(t, err)
		assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
		resp.Body.Close()

		resp, err = client.Get(s.URL)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		assert.Error(t, err, "the aborted response fails")
		assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)
	})
}

func TestMiddlewareRefusesInvalidConfig(t *testing.T) {
	_, err := leveehttp.Middleware(leveehttp.ServerConfig{Timeout: -time.Second})
	assert.EqualError(t, err, "leveehttp: Timeout must be >= 0, got -1s")
	_, err = leveehttp.Middleware(leveehttp.ServerConfig{BulkheadRetryAfter: -1})
	assert.EqualError(t, err, "leveehttp: BulkheadRetryAfter must be >= 0, got -1ns")
}

// A client gone while waiting for a permission gets no answer written, and takes no permit.
func TestMiddlewareClientGone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bh := levee.Must(bulkhead.New("api", bulkhead.Config{MaxConcurrentCalls: 1, MaxWaitDuration: time.Minute}))
		require.NoError(t, bh.Acquire(context.Background()))
		h := middleware(t, leveehttp.ServerConfig{Bulkhead: bh}, okHandler)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx))
		assert.False(t, w.Flushed)
		assert.Equal(t, "", w.Body.String())
		assert.True(t, errors.Is(ctx.Err(), context.DeadlineExceeded))
		bh.Release()
		assert.Equal(t, 1, bh.Metrics().AvailableConcurrentCalls)
	})
}
