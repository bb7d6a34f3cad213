package leveehttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/levee-go/levee"
	"github.com/levee-go/levee/bulkhead"
	"github.com/levee-go/levee/priority"
	"github.com/levee-go/levee/ratelimiter"
	"github.com/levee-go/levee/retry"
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

	// Limiter, when set, is a rate limiter of any kind (levee.PermissionLimiter: a limiter
	// shared by a fleet, leveeredis.RateLimiter, or one of your own), taking one permission
	// per request after RateLimiter. A request refused with a rejection (levee.IsRejection)
	// is answered 429 Too Many Requests with Retry-After: the limiter's own wait, in whole
	// seconds rounded up, at least 1 — for a *ratelimiter.RateLimiter its NanosToWait, for a
	// levee.RetryAdvisor its RetryAfter at the refusal, else 1. Any other error it returns
	// (its store failing, say) is answered 503 Service Unavailable without Retry-After.
	Limiter levee.PermissionLimiter

	// Bulkhead, when set, holds one permit while the handler runs, waiting up to its
	// MaxWaitDuration. A request refused is answered 503 Service Unavailable with Retry-After:
	// BulkheadRetryAfter. The permit is released when the handler returns, or panics.
	Bulkhead *bulkhead.Bulkhead

	// BulkheadRetryAfter is the Retry-After of a bulkhead's refusal: a bulkhead does not know
	// when a permit will be free. Rounded up to whole seconds. [0: DefaultBulkheadRetryAfter,
	// 1s; must be >= 0]
	BulkheadRetryAfter time.Duration

	// ConcurrencyLimiter, when set, is a limit on the requests served at once of any kind
	// (levee.Admitter: adaptive.Limiter, adaptive.PartitionedLimiter, a Prioritizer's
	// limiter), holding one permit while the handler runs, after Bulkhead. A request refused
	// is answered 503 Service Unavailable with Retry-After: the limiter's RetryAfter at the
	// refusal when it is a levee.RetryAdvisor and says a positive wait, else
	// BulkheadRetryAfter; in whole seconds rounded up, at least 1. The permit ends when the
	// handler returns: OnSuccess; OnError with the deadline's error when the handler ran past
	// Timeout, or with a *levee.PanicError when it panicked; Release when the client went
	// away. An adaptive limit thus learns from each handler's latency.
	ConcurrencyLimiter levee.Admitter

	// Timeout, when positive, is each request's time limit: the handler's context (the
	// request's) gets that deadline, with http.ErrHandlerTimeout as its cause. A handler that
	// has written nothing when the deadline passes (an informational status such as 103 Early
	// Hints, sent at once, starts nothing) has 503 Service Unavailable answered in its
	// place at that instant, as http.TimeoutHandler answers (504 is a gateway's answer for its
	// upstream), even when it ignores its context: the handler runs on a goroutine of its own,
	// and what it writes after the deadline is discarded, its writes failing with
	// http.ErrHandlerTimeout. Its headers are kept apart until it writes, so that a late
	// handler never touches the response. A handler that started its response before the
	// deadline is not cut short: what it wrote stands and the request ends when it returns. A
	// handler that ignores its context keeps running (and holds its bulkhead permit) until it
	// returns; a panic after the deadline goes to OnPanic only. When the client goes away
	// before the handler has written, the request ends at once too, and nothing is written.
	// [0: no limit, and the handler runs on the request's goroutine; must be >= 0]
	Timeout time.Duration

	// AttemptCountHeader is the request header carrying the caller's attempt number (1 for the
	// first attempt, more for a retry), as leveehttp's Transport and Envoy send it on every
	// attempt of a caller that retries: a request carrying exactly one valid value (a positive
	// integer) has it in its context, read by retry.IncomingAttempt and retry.CallerRetries, so
	// that a retry of this service's own calls leaves the retrying to that caller
	// (retry.Config.NoRetryOfRetries: retries at one layer, the outermost). A missing,
	// repeated, zero, negative or malformed value puts nothing in the context.
	// ["": DefaultAttemptCountHeader]
	AttemptCountHeader string

	// PriorityHeader is the request header carrying the caller's priority, as the priority
	// package writes it and Transport sends it (priority.Carried): a priority's name
	// ("critical", case-insensitive) or a priority and a level in its range ("high/37"). A
	// request carrying exactly one valid value has it in its context before any limiter runs
	// (priority.ParseHeader: priority.WithPriority, or priority.WithLevel for a level), so
	// that a ConcurrencyLimiter from an adaptive.Prioritizer (Prioritizer.Limiter) sheds it at
	// that priority and the handler reads it (priority.FromContext). A request with no value,
	// or a value that is not valid (several values, an unknown name such as "urgent", an
	// offset outside [0, 99]) is served, not refused, with the context it came with: without
	// a priority, it is Normal's, so that a malformed value never raises a caller above
	// Normal. The header is the caller's word: behind a public edge, strip it there or set
	// IgnorePriority. ["": priority.DefaultHeaderName, "Levee-Priority"]
	PriorityHeader string

	// IgnorePriority reads no PriorityHeader: requests keep the priority their context
	// carries (none, unless the server's BaseContext or an outer middleware gave one). [false]
	IgnorePriority bool

	// OnPanic, when set, is called with the request, the value a handler panicked with and
	// the stack, before the panic is answered 500 Internal Server Error (or, when the response
	// was already started, the connection aborted with http.ErrAbortHandler).
	OnPanic func(r *http.Request, value any, stack []byte)
}

// Middleware returns a middleware guarding a handler with cfg: first the rate limiters (429),
// then the bulkhead and the concurrency limiter (503), then the time limit (503), and a panic in the handler recovered
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
	if h := cfg.AttemptCountHeader; h != "" && !validHeaderName(h) {
		return nil, fmt.Errorf("leveehttp: AttemptCountHeader must be a valid header name, got %q", h)
	}
	if h := cfg.PriorityHeader; h != "" && !validHeaderName(h) {
		return nil, fmt.Errorf("leveehttp: PriorityHeader must be a valid header name, got %q", h)
	}
	if cfg.BulkheadRetryAfter == 0 {
		cfg.BulkheadRetryAfter = DefaultBulkheadRetryAfter
	}
	if isNil(cfg.Limiter) {
		cfg.Limiter = nil // a nil pointer in the field is a limiter left unset
	}
	if isNil(cfg.ConcurrencyLimiter) {
		cfg.ConcurrencyLimiter = nil
	}
	cfg.AttemptCountHeader = http.CanonicalHeaderKey(cfg.AttemptCountHeader)
	if cfg.AttemptCountHeader == "" {
		cfg.AttemptCountHeader = DefaultAttemptCountHeader
	}
	cfg.PriorityHeader = http.CanonicalHeaderKey(cfg.PriorityHeader)
	if cfg.PriorityHeader == "" {
		cfg.PriorityHeader = string(priority.DefaultHeaderName)
	}
	if cfg.IgnorePriority {
		cfg.PriorityHeader = ""
	}
	bulkheadRA := retryAfterSeconds(cfg.BulkheadRetryAfter)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			serve(cfg, bulkheadRA, next, w, r)
		})
	}, nil
}

func serve(cfg ServerConfig, bulkheadRA string, next http.Handler, w http.ResponseWriter, r *http.Request) {
	if n, ok := parseAttempt(r.Header[cfg.AttemptCountHeader]); ok {
		r = r.WithContext(retry.WithIncomingAttempt(r.Context(), n))
	}
	if cfg.PriorityHeader != "" {
		if vs := r.Header[cfg.PriorityHeader]; len(vs) == 1 {
			if ctx, err := priority.ParseHeader(r.Context(), vs[0]); err == nil && ctx != r.Context() {
				r = r.WithContext(ctx)
			}
		}
	}
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
	if cfg.Limiter != nil {
		if err := cfg.Limiter.AcquirePermission(ctx, 1); err != nil {
			if ctx.Err() != nil {
				return
			}
			if !levee.IsRejection(err) {
				http.Error(w, "service unavailable", http.StatusServiceUnavailable)
				return
			}
			w.Header().Set("Retry-After", retryAfterSeconds(limiterWait(cfg.Limiter)))
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
	}
	var permit levee.Permit
	if cfg.ConcurrencyLimiter != nil {
		p, err := cfg.ConcurrencyLimiter.Admit(ctx)
		if err != nil {
			if cfg.Bulkhead != nil {
				cfg.Bulkhead.Release()
			}
			if ctx.Err() != nil {
				return
			}
			ra := bulkheadRA
			if d := advisedWait(cfg.ConcurrencyLimiter); d > 0 {
				ra = retryAfterSeconds(d)
			}
			w.Header().Set("Retry-After", ra)
			http.Error(w, "service unavailable: at capacity", http.StatusServiceUnavailable)
			return
		}
		permit = p
	}
	if cfg.Timeout > 0 {
		serveTimed(cfg, permit, next, w, r)
		return
	}
	if cfg.Bulkhead != nil {
		defer cfg.Bulkhead.Release()
	}
	gw := &guardedWriter{w: w}
	defer func() {
		v := recover()
		endPermit(permit, r.Context(), nil, v, nil)
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

// handlerPanic is a panic of a handler run on its own goroutine, with its stack.
type handlerPanic struct {
	value any
	stack []byte
}

// serveTimed runs next on a goroutine of its own under cfg.Timeout, and answers 503 at the
// deadline when next has written nothing by then, as http.TimeoutHandler does. A bulkhead
// permit taken by serve is released when next returns.
func serveTimed(cfg ServerConfig, permit levee.Permit, next http.Handler, w http.ResponseWriter, r *http.Request) {
	outer := r.Context()
	ctx, cancel := context.WithTimeoutCause(outer, cfg.Timeout, http.ErrHandlerTimeout)
	defer cancel()
	r = r.WithContext(ctx)
	gw := &guardedWriter{w: w, ctx: ctx, own: make(http.Header)}
	for k, v := range w.Header() { // what the server set before the handler, as Date
		gw.own[k] = v
	}
	done := make(chan struct{})
	panicked := make(chan handlerPanic, 1)
	go func() {
		defer close(done)
		if cfg.Bulkhead != nil {
			defer cfg.Bulkhead.Release()
		}
		defer func() {
			v := recover()
			var stack []byte
			if v != nil && v != http.ErrAbortHandler {
				stack = debug.Stack()
			}
			endPermit(permit, outer, ctx, v, stack)
			if v == nil {
				gw.finish()
				return
			}
			p := handlerPanic{value: v, stack: stack}
			if p.stack == nil {
				p.stack = debug.Stack()
			}
			if gw.abandoned() {
				// The request has been answered and served: nobody can be told but OnPanic.
				if v != http.ErrAbortHandler && cfg.OnPanic != nil {
					cfg.OnPanic(r, v, p.stack)
				}
				return
			}
			panicked <- p
		}()
		next.ServeHTTP(gw, r)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		if gw.abandon() {
			return // answered 503 (or, the client gone, nothing): the late handler is discarded
		}
		<-done // the handler started its response before the deadline: it finishes it
	}
	select {
	case p := <-panicked:
		if p.value == http.ErrAbortHandler {
			panic(p.value)
		}
		if cfg.OnPanic != nil {
			cfg.OnPanic(r, p.value, p.stack)
		}
		if !gw.answer(http.StatusInternalServerError, "internal server error") {
			panic(http.ErrAbortHandler)
		}
	default:
	}
}

// isNil reports whether v is nil or holds a nil pointer (or other nil reference).
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Chan, reflect.Func, reflect.Interface:
		return r.IsNil()
	}
	return false
}

// limiterWait is the wait a refused request is told for l: a core limiter's NanosToWait, a
// RetryAdvisor's RetryAfter, else 0 (which Retry-After rounds up to 1 second).
func limiterWait(l levee.PermissionLimiter) time.Duration {
	if rl, ok := l.(*ratelimiter.RateLimiter); ok {
		return rl.Metrics().NanosToWait
	}
	return advisedWait(l)
}

// advisedWait is v's RetryAfter when v is a levee.RetryAdvisor, else 0.
func advisedWait(v any) time.Duration {
	if a, ok := v.(levee.RetryAdvisor); ok {
		return a.RetryAfter()
	}
	return 0
}

// endPermit ends a concurrency limiter's permit p, if any, with the handler's outcome: the
// client gone (outer done) is Release; a panic (v) is OnError with a *levee.PanicError; a
// handler that returned past its time limit (timed's deadline) is OnError with that
// deadline's error; else OnSuccess. A panic with http.ErrAbortHandler is the handler's way of
// ending the response and counts as a success.
func endPermit(p levee.Permit, outer, timed context.Context, v any, stack []byte) {
	switch {
	case p == nil:
	case outer.Err() != nil:
		p.Release()
	case v != nil && v != http.ErrAbortHandler:
		p.OnError(&levee.PanicError{Value: v, Stack: stack})
	case timed != nil && timed.Err() != nil:
		p.OnError(timed.Err())
	default:
		p.OnSuccess()
	}
}

// parseAttempt reads an attempt count header: exactly one value, a positive decimal integer.
func parseAttempt(vs []string) (int, bool) {
	if len(vs) != 1 {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(vs[0]))
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
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
	own http.Header     // with a time limit: the handler's headers until it starts writing

	mu       sync.Mutex
	started  bool // a status was written, by the handler or in its place
	timedOut bool // the 503 of the time limit was written, or the request was abandoned
}

// Header returns the handler's headers: with a time limit, a map of its own until the handler
// starts its response (then copied to the response), and again once the request was answered
// without it, so that a late handler never touches the response's.
func (g *guardedWriter) Header() http.Header {
	if g.own == nil {
		return g.w.Header()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.started && !g.timedOut {
		return g.w.Header()
	}
	return g.own
}

// abandon ends a timed request whose context is done while its handler still runs: it answers
// 503 in the handler's place (nothing, when the client has gone) and reports true, or reports
// false when the handler had started its response, which it is then left to finish.
func (g *guardedWriter) abandon() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.timedOut {
		return true
	}
	if g.started {
		return false
	}
	if g.expired() {
		g.timeout()
	} else {
		g.started, g.timedOut = true, true
	}
	return true
}

// abandoned reports whether the request was answered without the handler.
func (g *guardedWriter) abandoned() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.timedOut
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (g *guardedWriter) Unwrap() http.ResponseWriter { return g.w }

// admit reports whether the handler may write now, answering 503 in its place when the time
// limit passed before it started.
func (g *guardedWriter) admit() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.mayWriteLocked() {
		return false
	}
	g.started = true
	return true
}

// mayWriteLocked is admit's decision without starting the response: false once the time
// limit answered, or when it passed before the response started (answering 503 now); true
// otherwise, with the handler's own headers in place. g.mu is held.
func (g *guardedWriter) mayWriteLocked() bool {
	if g.timedOut {
		return false
	}
	if !g.started && g.expired() {
		g.timeout()
		return false
	}
	if !g.started {
		g.showOwn()
	}
	return true
}

// showOwn puts the handler's headers, kept apart under a time limit, in the response's place;
// g.mu is held and the response not started.
func (g *guardedWriter) showOwn() {
	if g.own == nil {
		return
	}
	h := g.w.Header()
	for k := range h {
		delete(h, k)
	}
	for k, v := range g.own {
		h[k] = v
	}
}

// informational reports whether code is an informational status that net/http writes at once
// and that leaves the response to come (1xx, but 101 Switching Protocols, which ends it).
func informational(code int) bool {
	return code >= 100 && code <= 199 && code != http.StatusSwitchingProtocols
}

// inform writes the informational status code (a 103 Early Hints) with the handler's headers.
// It does not start the response: the handler still writes its status, the time limit still
// answers 503 in its place and a panic still 500. It writes holding g.mu, so that the time
// limit's 503 is never written at the same time.
func (g *guardedWriter) inform(code int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mayWriteLocked() {
		g.w.WriteHeader(code)
	}
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
	if informational(code) {
		g.inform(code)
		return
	}
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
