package leveehttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/ratelimiter"
)

// DefaultBulkheadRetryAfter is ServerConfig.BulkheadRetryAfter's default.
const DefaultBulkheadRetryAfter = time.Second

// ServerConfig configures Middleware. Every field may be left zero.
type ServerConfig struct {
	// RateLimiter, when set, takes one permission per request, waiting up to its
	// TimeoutDuration (and never past the request's context). A request refused is answered
	// 429 Too Many Requests with Retry-After: the limiter's own wait for the next permission
	// (ratelimiter.Metrics.NanosToWait), in whole seconds rounded up, at least 1.
	RateLimiter *ratelimiter.RateLimiter

	// Bulkhead, when set, holds one permit while the handler runs, waiting up to its
	// MaxWaitDuration. A request refused is answered 503 Service Unavailable with Retry-After:
	// BulkheadRetryAfter. The permit is released when the handler returns, or panics.
	Bulkhead *bulkhead.Bulkhead

	// BulkheadRetryAfter is the Retry-After of a bulkhead's refusal: a bulkhead does not know
	// when a permit will be free. Rounded up to whole seconds. [0: DefaultBulkheadRetryAfter,
	// 1s; must be >= 0]
	BulkheadRetryAfter time.Duration

	// Timeout, when positive, is each request's time limit: the handler's context (the
	// request's) gets that deadline, with http.ErrHandlerTimeout as its cause. A handler that
	// has written nothing when the deadline passes gets its response replaced by 503 Service
	// Unavailable, as http.TimeoutHandler answers (504 is a gateway's answer for its upstream):
	// its later writes fail with http.ErrHandlerTimeout. What was written before the deadline
	// stands. The handler is run on the request's goroutine, as without Middleware: one that
	// ignores its context keeps running (and holds its bulkhead permit) until it returns.
	// [0: no limit; must be >= 0]
	Timeout time.Duration

	// OnPanic, when set, is called with the request, the value a handler panicked with and
	// the stack, before the panic is answered 500 Internal Server Error (or, when the response
	// was already started, the connection aborted with http.ErrAbortHandler).
	OnPanic func(r *http.Request, value any, stack []byte)
}

// Middleware returns a middleware guarding a handler with cfg: first the rate limiter (429),
// then the bulkhead (503), then the time limit (503), and a panic in the handler recovered
// into 500 Internal Server Error with every permit released. A panic with
// http.ErrAbortHandler is panicked again, after the permit is released, so that net/http
// aborts the response as it expects. It refuses an invalid cfg with an error naming the field.
//
// The rate limiter comes first so that a request waiting for a permission holds no bulkhead
// permit.
func Middleware(cfg ServerConfig) (func(http.Handler) http.Handler, error) {
	if cfg.BulkheadRetryAfter < 0 {
		return nil, fmt.Errorf("leveehttp: BulkheadRetryAfter must be >= 0, got %v", cfg.BulkheadRetryAfter)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("leveehttp: Timeout must be >= 0, got %v", cfg.Timeout)
	}
	if cfg.BulkheadRetryAfter == 0 {
		cfg.BulkheadRetryAfter = DefaultBulkheadRetryAfter
	}
	bulkheadRA := retryAfterSeconds(cfg.BulkheadRetryAfter)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			serve(cfg, bulkheadRA, next, w, r)
		})
	}, nil
}

func serve(cfg ServerConfig, bulkheadRA string, next http.Handler, w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if cfg.RateLimiter != nil {
		if err := cfg.RateLimiter.AcquirePermission(ctx, 1); err != nil {
			if ctx.Err() != nil {
				return // the client has gone: nobody reads an answer
			}
			w.Header().Set("Retry-After", retryAfterSeconds(cfg.RateLimiter.Metrics().NanosToWait))
			http.Error(w, "too many requests", http.StatusTooManyRequests)
			return
		}
	}
	if cfg.Bulkhead != nil {
		if err := cfg.Bulkhead.Acquire(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			w.Header().Set("Retry-After", bulkheadRA)
			http.Error(w, "service unavailable: at capacity", http.StatusServiceUnavailable)
			return
		}
		defer cfg.Bulkhead.Release()
	}
	gw := &guardedWriter{w: w}
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, cfg.Timeout, http.ErrHandlerTimeout)
		defer cancel()
		r = r.WithContext(ctx)
		gw.ctx = ctx
	}
	defer func() {
		v := recover()
		if v == nil {
			gw.finish()
			return
		}
		if v == http.ErrAbortHandler {
			panic(v)
		}
		if cfg.OnPanic != nil {
			cfg.OnPanic(r, v, debug.Stack())
		}
		if !gw.answer(http.StatusInternalServerError, "internal server error") {
			panic(http.ErrAbortHandler) // the response was started: abort it
		}
	}()
	next.ServeHTTP(gw, r)
}

// retryAfterSeconds formats d as a Retry-After delay-seconds value, rounded up, at least 1.
func retryAfterSeconds(d time.Duration) string {
	s := (d + time.Second - 1) / time.Second
	return strconv.FormatInt(max(int64(s), 1), 10)
}

// guardedWriter records whether the handler started its response and, past the time limit,
// answers 503 in its place.
type guardedWriter struct {
	w   http.ResponseWriter
	ctx context.Context // nil without a time limit

	mu       sync.Mutex
	started  bool // a status was written, by the handler or in its place
	timedOut bool // the 503 of the time limit was written
}

func (g *guardedWriter) Header() http.Header { return g.w.Header() }

// Unwrap lets http.ResponseController reach the underlying writer.
func (g *guardedWriter) Unwrap() http.ResponseWriter { return g.w }

// admit reports whether the handler may write now, answering 503 in its place when the time
// limit passed before it started.
func (g *guardedWriter) admit() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.timedOut {
		return false
	}
	if !g.started && g.expired() {
		g.timeout()
		return false
	}
	g.started = true
	return true
}

func (g *guardedWriter) expired() bool {
	return g.ctx != nil && g.ctx.Err() != nil && errors.Is(context.Cause(g.ctx), http.ErrHandlerTimeout)
}

// timeout writes the time limit's 503; g.mu is held and nothing was written yet.
func (g *guardedWriter) timeout() {
	g.started, g.timedOut = true, true
	h := g.w.Header()
	for k := range h {
		delete(h, k)
	}
	http.Error(g.w, "service unavailable: request timed out", http.StatusServiceUnavailable)
}

func (g *guardedWriter) WriteHeader(code int) {
	if g.admit() {
		g.w.WriteHeader(code)
	}
}

func (g *guardedWriter) Write(b []byte) (int, error) {
	if !g.admit() {
		return 0, http.ErrHandlerTimeout
	}
	return g.w.Write(b)
}

// Flush flushes the underlying writer, when it can.
func (g *guardedWriter) Flush() {
	if g.admit() {
		if f, ok := g.w.(http.Flusher); ok {
			f.Flush()
		}
	}
}

// finish answers 503 for a handler that returned past its time limit having written nothing.
func (g *guardedWriter) finish() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.started && g.expired() {
		g.timeout()
	}
}

// answer writes code and msg in place of the handler's response, and reports false when the
// response had already been started.
func (g *guardedWriter) answer(code int, msg string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.started {
		return g.timedOut
	}
	g.started = true
	h := g.w.Header()
	for k := range h {
		delete(h, k)
	}
	http.Error(g.w, msg, code)
	return true
}
